/**
 * The control-plane watchdog (the leader's, beside the tenant controller): every `intervalMs` it
 * probes each tenant whose control plane should be serving — a process that exited is found at
 * once, an API server that stops answering /readyz after `unresponsiveProbes` probes in a row —
 * and hands the fault to the tenant reconciler, which marks the tenant Degraded, heals it and
 * says when it serves again. Between two drift checks (60 s) nothing else would notice.
 */
import { runPeriodically } from "@/server/controllers/periodic";
import type { Logger } from "@/server/logger";
import type { ControlPlaneFault, Provisioner } from "@/server/provisioners/types";
import type { DetectedFault } from "./observed";
import { conditionOf } from "./status";
import type { TenantResource } from "./tenant-resources";

export interface WatchdogOptions {
  provisioners: Partial<Record<string, Pick<Provisioner, "probe">>>;
  defaultProvisioner: string;
  /** The Tenants as the shared informer last saw them. */
  tenants: () => TenantResource[];
  /** Called with each fault found (the same tenant again after `reportEveryMs`). */
  onFault: (tenant: string, fault: DetectedFault) => void;
  logger: Logger;
  /** Default 1 s: a dead process is found within it. */
  intervalMs?: number;
  /** Failed readiness probes in a row before an API server counts as unresponsive. Default 3. */
  unresponsiveProbes?: number;
  /** Probes at once. Default 16. */
  concurrency?: number;
  /** How long one probe may take before it counts as an unresponsive API server. Default 5 s. */
  probeTimeoutMs?: number;
  /** A tenant whose fault lasts is handed over again after this long. Default 5 s. */
  reportEveryMs?: number;
  now?: () => Date;
}

/** Whether a tenant's control plane should be serving now (it was Ready, or is Degraded). */
export function shouldServe(tenant: TenantResource): boolean {
  if (tenant.metadata.deletionTimestamp || tenant.spec?.suspend) return false;
  const phase = tenant.status?.phase;
  return (
    (phase === "Ready" && conditionOf(tenant.status, "ControlPlaneReady")?.status === "True") ||
    phase === "Degraded"
  );
}

export function startWatchdog(options: WatchdogOptions): { stop(): Promise<void> } {
  const intervalMs = options.intervalMs ?? 1_000;
  const needed = options.unresponsiveProbes ?? 3;
  const concurrency = options.concurrency ?? 16;
  const probeTimeoutMs = options.probeTimeoutMs ?? 5_000;
  const reportEveryMs = options.reportEveryMs ?? 5_000;
  const now = options.now ?? (() => new Date());
  const log = options.logger.child({ component: "control-plane-watchdog" });
  /** Unresponsive probes in a row, by tenant. */
  const misses = new Map<string, number>();
  /** When each tenant's last fault was handed over (again at most every `reportEveryMs`). */
  const reported = new Map<string, number>();
  let stopped = false;

  /** One tenant's probe: its fault once it counts (an exit at once, a silence after `needed` in a row). */
  const probeOne = async (tenant: TenantResource): Promise<ControlPlaneFault | undefined> => {
    const name = tenant.metadata.name;
    const provisionerName =
      tenant.status?.provisioner ?? tenant.spec?.controlPlane?.provisioner ?? options.defaultProvisioner;
    const probe = options.provisioners[provisionerName]?.probe;
    if (!probe) return undefined;
    let fault: ControlPlaneFault | undefined;
    let timer: NodeJS.Timeout | undefined;
    try {
      // A probe that does not return is itself the sign of a control plane that does not answer;
      // it must never hold up the other tenants' probes.
      fault = await Promise.race([
        probe(name),
        new Promise<ControlPlaneFault>((resolve) => {
          timer = setTimeout(
            () =>
              resolve({
                component: "kube-apiserver",
                kind: "unresponsive",
                message: "kube-apiserver does not answer its readiness check",
                detail: `the probe did not return within ${probeTimeoutMs} ms`,
              }),
            probeTimeoutMs,
          );
        }),
      ]);
    } catch (error) {
      log.debug("probe failed", { tenant: name, error });
      return undefined;
    } finally {
      clearTimeout(timer);
    }
    if (!fault) {
      misses.delete(name);
      return undefined;
    }
    if (fault.kind === "unresponsive") {
      const count = (misses.get(name) ?? 0) + 1;
      misses.set(name, count);
      if (count < needed) return undefined;
    }
    misses.delete(name);
    return fault;
  };

  /**
   * Hands a fault over, at most every `reportEveryMs` per tenant: a Degraded tenant whose heal did
   * not work (the new API server hangs too) is handed over again, so it is restarted again.
   */
  const report = (tenant: TenantResource, fault: ControlPlaneFault) => {
    const name = tenant.metadata.name;
    const last = reported.get(name);
    if (last !== undefined && Date.now() - last < reportEveryMs) return;
    reported.set(name, Date.now());
    log.warn("control plane fault found", {
      tenant: name,
      component: fault.component,
      kind: fault.kind,
      detail: fault.detail,
    });
    options.onFault(name, { ...fault, at: now() });
  };

  const runRound = async () => {
    const serving = options.tenants().filter(shouldServe);
    const names = new Set(serving.map((tenant) => tenant.metadata.name));
    for (const name of misses.keys()) if (!names.has(name)) misses.delete(name);
    for (const name of reported.keys()) if (!names.has(name)) reported.delete(name);
    const found: [TenantResource, ControlPlaneFault][] = [];
    for (let i = 0; i < serving.length && !stopped; i += concurrency) {
      const batch = serving.slice(i, i + concurrency);
      const faults = await Promise.all(batch.map(probeOne));
      faults.forEach((fault, index) => {
        if (fault) found.push([batch[index] as TenantResource, fault]);
      });
    }
    // Many API servers silent at once is Ring0's own trouble (its event loop or the host starved),
    // not theirs: kill none of them for it. Exits are facts and are always handed over.
    const silent = found.filter(([, fault]) => fault.kind === "unresponsive").length;
    const starved = silent >= 3 && silent * 2 > serving.length;
    if (starved) {
      log.warn("many control planes failed their readiness probes at once; restarting none of them for it", {
        silent,
        probed: serving.length,
      });
    }
    for (const [tenant, fault] of found) {
      if (!starved || fault.kind === "exited") report(tenant, fault);
    }
  };

  const loop = runPeriodically(intervalMs, runRound, (error) => log.warn("watchdog round failed", { error }));
  return {
    async stop() {
      stopped = true;
      await loop.stop();
    },
  };
}
