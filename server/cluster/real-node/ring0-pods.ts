/**
 * Ring0's own server pods (Ring0 installed into the super cluster by its chart), as both walls know
 * them: the super cluster's API for pods (./super-api-proxy.ts) admits only them, and the tenant
 * wall (./tenant-wall.ts) lets only them reach every tenant control plane's API servers.
 */
/** Ring0's own server pods, as its chart labels them (deploy/helm/ring0, ring0.selectorLabels). */
export const RING0_SERVER_NAMESPACE = "ring0-system";
export const RING0_SERVER_LABELS = {
  "app.kubernetes.io/name": "ring0",
  "app.kubernetes.io/component": "server",
} as const;

/**
 * The port of Ring0's admission webhooks in its server pods (the chart's container port
 * "webhooks"): the one port of them a control plane's API server pods may open connections to.
 */
export const RING0_WEBHOOK_POD_PORT = 9443;

export interface PodAtAddress {
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; deletionTimestamp?: string };
  spec?: { hostNetwork?: boolean };
  status?: { phase?: string; podIP?: string };
}

/**
 * Whether the pods found at a source address are exactly one of Ring0's server pods (pure). Two
 * pods claiming one address (one leaving, one arriving) admit nothing until it settles. Finished
 * pods (Succeeded, Failed: they may keep their old address in their status) and host-network pods
 * hold no pod address, so they neither count nor pass.
 */
export function isRing0ServerPod(pods: PodAtAddress[], address: string): boolean {
  const here = pods.filter(
    (pod) =>
      pod.status?.podIP === address &&
      pod.status?.phase !== "Succeeded" &&
      pod.status?.phase !== "Failed" &&
      !pod.spec?.hostNetwork,
  );
  if (here.length !== 1) return false;
  const pod = here[0] as PodAtAddress;
  return (
    pod.metadata.namespace === RING0_SERVER_NAMESPACE &&
    !pod.spec?.hostNetwork &&
    !pod.metadata.deletionTimestamp &&
    pod.status?.phase === "Running" &&
    Object.entries(RING0_SERVER_LABELS).every(([key, value]) => pod.metadata.labels?.[key] === value)
  );
}
