/**
 * Ring0's record of a tenant's local control plane (`ring0.json`): its version, the binaries it was
 * started with and the ports it owns. It is what lets a restarted Ring0 adopt what runs and stop it
 * with the binaries it was started with; a stopped tenant's ports stay its own.
 */
import { readText, type TenantPaths, writeAtomically } from "./paths";

export const PORT_OPTIONS = [
  "kubeApiserverPort",
  "etcdPort",
  "etcdPeerPort",
  "kubeControllerManagerPort",
] as const;
export type LocalControlPlanePorts = Record<(typeof PORT_OPTIONS)[number], number>;

/** What Ring0 remembers of a tenant's local control plane (`ring0.json`). */
export interface LocalControlPlaneRecord {
  /** Exact Kubernetes version ("1.36.4"). */
  version: string;
  /** The binaries it runs on (and the kwokctl that manages it). */
  binDir: string;
  ports: LocalControlPlanePorts;
  /** ISO time of creation. */
  createdAt: string;
  /** Stopped on purpose (suspended) — as opposed to processes that died. */
  stopped: boolean;
}

/** `ring0.json` → record; undefined for anything incomplete or malformed. */
export function parseLocalRecord(text: string): LocalControlPlaneRecord | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof value !== "object" || value === null) return undefined;
  const record = value as Partial<Record<keyof LocalControlPlaneRecord, unknown>>;
  const ports = record.ports as Partial<Record<string, unknown>> | undefined;
  const validPort = (port: unknown) =>
    typeof port === "number" && Number.isInteger(port) && port > 0 && port < 65536;
  if (
    typeof record.version !== "string" ||
    typeof record.binDir !== "string" ||
    typeof record.createdAt !== "string" ||
    typeof ports !== "object" ||
    ports === null ||
    !PORT_OPTIONS.every((option) => validPort(ports[option]))
  ) {
    return undefined;
  }
  return {
    version: record.version,
    binDir: record.binDir,
    createdAt: record.createdAt,
    stopped: record.stopped === true,
    ports: Object.fromEntries(
      PORT_OPTIONS.map((option) => [option, ports[option]]),
    ) as LocalControlPlanePorts,
  };
}

export function readRecord(paths: TenantPaths): LocalControlPlaneRecord | undefined {
  const text = readText(paths.record);
  return text === undefined ? undefined : parseLocalRecord(text);
}

export function writeRecord(paths: TenantPaths, record: LocalControlPlaneRecord): void {
  writeAtomically(paths.record, `${JSON.stringify(record, null, 2)}\n`);
}

/** The URL of the tenant's API server. */
export function endpointOf(record: LocalControlPlaneRecord): string {
  return `https://127.0.0.1:${record.ports.kubeApiserverPort}`;
}
