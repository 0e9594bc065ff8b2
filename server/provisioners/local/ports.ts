/**
 * The loopback ports of local control planes: free ones from server/cluster/ports.ts, minus every
 * port a tenant has recorded (a stopped tenant's ports stay its own) and those handed out in this
 * process to creations still under way.
 */
import { freePortsFor } from "@/server/cluster/ports";
import { listTenantDirs, tenantPaths } from "./paths";
import { type LocalControlPlanePorts, PORT_OPTIONS, readRecord } from "./record";

export interface PortPicker {
  /** Ports for a control plane, reserved until released. */
  pick(): Promise<LocalControlPlanePorts>;
  /** Give reserved ports back (once they are in a record, or were not used). */
  release(ports: LocalControlPlanePorts): void;
}

/** Ports recorded by every tenant under `tenantsDir`. */
export function recordedPorts(tenantsDir: string): Set<number> {
  const ports = new Set<number>();
  for (const tenant of listTenantDirs(tenantsDir)) {
    const record = readRecord(tenantPaths(tenantsDir, tenant));
    for (const port of Object.values(record?.ports ?? {})) ports.add(port);
  }
  return ports;
}

export function portPicker(tenantsDir: string): PortPicker {
  /** Ports handed out in this process and not yet in a record (concurrent creations). */
  const reserved = new Set<number>();
  return {
    async pick() {
      for (let attempt = 0; ; attempt++) {
        const ports = await freePortsFor(PORT_OPTIONS);
        const taken = recordedPorts(tenantsDir);
        const values = Object.values(ports);
        if (attempt < 20 && values.some((port) => taken.has(port) || reserved.has(port))) continue;
        for (const port of values) reserved.add(port);
        return ports;
      }
    },
    release(ports) {
      for (const port of Object.values(ports)) reserved.delete(port);
    },
  };
}
