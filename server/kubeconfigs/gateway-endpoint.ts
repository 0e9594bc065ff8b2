/**
 * Where kubeconfigs point kubectl: the kube gateway's public base URL and, when kubectl must be
 * told which CA to trust, that CA. The runtime sets it at start-up; it lives on globalThis because
 * the custom server and Next's route handlers are separate module graphs.
 */
import { processSlot } from "@/server/core/process-slots";
export interface GatewayEndpoint {
  /** Base URL without a trailing slash, e.g. https://localhost:3443. */
  gatewayUrl: string;
  /** PEM CA certificate kubeconfigs embed as certificate-authority-data. */
  caPem?: string;
}

const slot = processSlot<GatewayEndpoint | null>("gateway.endpoint");

export function setGatewayEndpoint(endpoint: GatewayEndpoint | null): void {
  slot.set(endpoint);
}

export function getGatewayEndpoint(): GatewayEndpoint | null {
  return slot.get() ?? null;
}
