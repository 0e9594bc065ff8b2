/**
 * Where kubeconfigs point kubectl: the kube gateway's public base URL and, when kubectl must be
 * told which CA to trust, that CA. The runtime sets it at start-up; it lives on globalThis because
 * the custom server and Next's route handlers are separate module graphs.
 */
export interface GatewayEndpoint {
  /** Base URL without a trailing slash, e.g. https://localhost:3443. */
  gatewayUrl: string;
  /** PEM CA certificate kubeconfigs embed as certificate-authority-data. */
  caPem?: string;
}

const endpointKey = Symbol.for("ring0.gateway.endpoint");
type GlobalWithEndpoint = typeof globalThis & { [endpointKey]?: GatewayEndpoint | null };

export function setGatewayEndpoint(endpoint: GatewayEndpoint | null): void {
  (globalThis as GlobalWithEndpoint)[endpointKey] = endpoint;
}

export function getGatewayEndpoint(): GatewayEndpoint | null {
  return (globalThis as GlobalWithEndpoint)[endpointKey] ?? null;
}
