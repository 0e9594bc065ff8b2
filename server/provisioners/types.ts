/**
 * The provisioner interface: where a tenant's dedicated control plane runs. The tenant reconciler
 * (server/tenants/reconciler.ts) drives one implementation per Tenant, chosen by
 * `spec.controlPlane.provisioner` (default from RING0_DEFAULT_PROVISIONER):
 *
 *   local       kwokctl binary-runtime clusters (etcd, kube-apiserver, kube-controller-manager) as
 *               processes on 127.0.0.1, state under <stateDir>/tenants/<tenant>/ (server/provisioners/local/)
 *   kubernetes  etcd StatefulSet + kube-apiserver/kube-controller-manager Deployments in a namespace
 *               of the super cluster (server/provisioners/kubernetes/)
 *
 * Every method is idempotent and safe to call again after a crash at any point: `ensure` converges
 * (creates what is missing, adopts what already runs), `destroy` removes whatever is left.
 */

/** What the reconciler asks for. */
export interface ControlPlaneSpec {
  tenant: string;
  /** A version Ring0 has binaries for, as resolved by `resolveVersion` ("1.36.4"). */
  version: string;
  /** Stopped, data kept. */
  suspended: boolean;
  /**
   * The Tenant's own etcd volume claim (`spec.controlPlane.storage`) for a control plane in pods,
   * over the provisioner's defaults; ignored by the local provisioner.
   */
  storage?: { size?: string; storageClassName?: string };
  /**
   * Components to restart although they run: ones the watchdog found not answering (a hung API
   * server). Killed and started again like ones that exited; ignored while suspended.
   */
  restart?: string[];
}

export type ControlPlanePhase =
  /** Nothing exists for this tenant. */
  | "Absent"
  /** Created, not serving yet (processes starting, pods not ready). */
  | "Starting"
  /** Serving: /readyz answers 200. */
  | "Running"
  /** Suspended: no processes / zero replicas, data kept. */
  | "Stopped"
  /** Broken in a way retrying `ensure` may repair; `message` says what. */
  | "Failed";

export interface ControlPlaneObservation {
  phase: ControlPlanePhase;
  /** The API server URL Ring0 reaches (https://127.0.0.1:<port> locally). */
  endpoint?: string;
  /** The API server's gitVersion once it serves ("v1.36.4"). */
  version?: string;
  /** For a person: what is happening or what failed, and what to do about it. */
  message?: string;
}

/**
 * How Ring0 itself reaches a tenant control plane: its URL and an admin client identity
 * (system:masters). Server-side only — the gateway impersonates users with it; it is never sent to
 * a browser, and the operator's break-glass kubeconfig is built from it only as a file download.
 */
export interface ControlPlaneAccess {
  server: string;
  /** PEM: the CA that signed the API server's serving certificate. */
  ca: string;
  /** PEM: admin client certificate and key. */
  cert: string;
  key: string;
  /**
   * Where the tenant's own pods on the shared nodes reach this API server (their
   * `KUBERNETES_SERVICE_HOST`/`_PORT`), with `ca` as its CA; absent when the provisioner gives
   * pods no way to it (their service-account tokens are then not mounted).
   */
  podEndpoint?: { host: string; port: number };
  /**
   * Where this API server reaches the vn-agents (kubectl logs, exec, port-forward): the Hostname
   * address of its vNodes. Default localhost (an API server on Ring0's host); an API server in a
   * pod reaches them at the pod API address.
   */
  kubeletHost?: string;
}

/**
 * A component of a control plane that should be serving and is not, as `probe` finds it: a process
 * that exited (a pod that is not ready, in the super cluster) or an API server that does not answer
 * its health check.
 */
export interface ControlPlaneFault {
  /** kwokctl's / Kubernetes' name: "etcd", "kube-apiserver", "kube-controller-manager". */
  component: string;
  kind: "exited" | "unresponsive";
  /** For the tenant's people: what was seen, with no path, address or log line of the host. */
  message: string;
  /** For Ring0's log and operators only: where to look (log file, its last line). */
  detail?: string;
}

export interface Provisioner {
  readonly name: "local" | "kubernetes";
  /**
   * Make the control plane match `spec`: create it if absent, start it if stopped, stop it when
   * suspended, move it to `spec.version`. Returns quickly with "Starting" rather than blocking
   * until ready; the reconciler polls with `observe`.
   */
  ensure(spec: ControlPlaneSpec, signal?: AbortSignal): Promise<ControlPlaneObservation>;
  /** The current state without changing anything. */
  observe(tenant: string): Promise<ControlPlaneObservation>;
  /**
   * A cheap health check of a control plane that should be serving (process table, /readyz with a
   * short timeout): the first fault found, or undefined when it serves — or when it is not meant to
   * (absent, suspended, an `ensure` under way). Ring0's watchdog calls it every few seconds.
   */
  probe?(tenant: string): Promise<ControlPlaneFault | undefined>;
  /** Admin access, or undefined while there is no control plane to reach. */
  access(tenant: string): Promise<ControlPlaneAccess | undefined>;
  /** Remove everything of the tenant's control plane (processes, ports, files / objects). Idempotent. */
  destroy(tenant: string): Promise<void>;
  /** Tenants this provisioner holds a control plane (running or stopped) for — to find orphans. */
  list(): Promise<string[]>;
}

/** Thrown by `ensure` for a spec that retrying cannot fix (unknown version); the message says why. */
export class ControlPlaneSpecError extends Error {
  override name = "ControlPlaneSpecError";
}

/** Build an inline kubeconfig from admin access (for client-node connections and break-glass). */
export function kubeconfigFromAccess(access: ControlPlaneAccess, name: string): string {
  const b64 = (pem: string) => Buffer.from(pem).toString("base64");
  return [
    "apiVersion: v1",
    "kind: Config",
    "clusters:",
    `- name: ${name}`,
    "  cluster:",
    `    server: ${access.server}`,
    `    certificate-authority-data: ${b64(access.ca)}`,
    "users:",
    `- name: ${name}-admin`,
    "  user:",
    `    client-certificate-data: ${b64(access.cert)}`,
    `    client-key-data: ${b64(access.key)}`,
    "contexts:",
    `- name: ${name}`,
    "  context:",
    `    cluster: ${name}`,
    `    user: ${name}-admin`,
    `current-context: ${name}`,
    "",
  ].join("\n");
}
