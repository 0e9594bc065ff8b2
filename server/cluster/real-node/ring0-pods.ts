/**
 * Ring0's own pods (Ring0 installed into the super cluster by its chart), as both walls know them:
 * its server pods and its vn-agents (the chart's DaemonSet, one beside each node's kubelet). The
 * super cluster's API for pods (./super-api-proxy.ts) admits only them; the tenant wall
 * (./tenant-wall.ts) lets only the server pods reach every tenant control plane's API servers, and
 * only a vn-agent reach its own node's kubelet.
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

/** Ring0's vn-agent pods, as its chart labels them (deploy/helm/ring0, the vn-agent DaemonSet). */
export const RING0_VN_AGENT_LABELS = {
  "app.kubernetes.io/name": "ring0",
  "app.kubernetes.io/component": "vn-agent",
} as const;

/**
 * The port a vn-agent pod serves the kubelet API on (the chart's container port "vn-agent"): the
 * one port of it a control plane's API server pods may open connections to.
 */
export const RING0_VN_AGENT_POD_PORT = 10550;

export type Ring0PodComponent = "server" | "vn-agent";
const COMPONENT_LABELS: Record<Ring0PodComponent, Record<string, string>> = {
  server: RING0_SERVER_LABELS,
  "vn-agent": RING0_VN_AGENT_LABELS,
};

export interface PodAtAddress {
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; deletionTimestamp?: string };
  spec?: { hostNetwork?: boolean; nodeName?: string };
  status?: { phase?: string; podIP?: string };
}

/**
 * Whether the pods found at a source address are exactly one of Ring0's server pods (pure). Two
 * pods claiming one address (one leaving, one arriving) admit nothing until it settles. Finished
 * pods (Succeeded, Failed: they may keep their old address in their status) and host-network pods
 * hold no pod address, so they neither count nor pass.
 */
export function isRing0ServerPod(pods: PodAtAddress[], address: string): boolean {
  return ring0PodAt(pods, address) === "server";
}

/** Which of Ring0's pods exactly one pod at `address` is (as isRing0ServerPod), or undefined. */
export function ring0PodAt(pods: PodAtAddress[], address: string): Ring0PodComponent | undefined {
  const here = pods.filter(
    (pod) =>
      pod.status?.podIP === address &&
      pod.status?.phase !== "Succeeded" &&
      pod.status?.phase !== "Failed" &&
      !pod.spec?.hostNetwork,
  );
  if (here.length !== 1) return undefined;
  const pod = here[0] as PodAtAddress;
  if (
    pod.metadata.namespace !== RING0_SERVER_NAMESPACE ||
    pod.spec?.hostNetwork ||
    pod.metadata.deletionTimestamp ||
    pod.status?.phase !== "Running"
  )
    return undefined;
  return (Object.keys(COMPONENT_LABELS) as Ring0PodComponent[]).find((component) =>
    Object.entries(COMPONENT_LABELS[component]).every(([key, value]) => pod.metadata.labels?.[key] === value),
  );
}
