/**
 * The tenant's pod as the isolation checks read it: as written, so any field may be missing or of
 * the wrong type; its containers of every kind with where they are; and how a check reports.
 */
import type { IsolationRule } from "./contracts";

/** The tenant's JSON as written: any field may be missing or of the wrong type. */
export type Untrusted = Record<string, unknown>;

export function objectOf(value: unknown): Untrusted | undefined {
  return value !== null && typeof value === "object" && !Array.isArray(value)
    ? (value as Untrusted)
    : undefined;
}

export function listOf(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

export function textOf(value: unknown): string | undefined {
  return typeof value === "string" ? value : undefined;
}

const containerKinds = [
  { field: "containers", noun: "Container" },
  { field: "initContainers", noun: "Init container" },
  { field: "ephemeralContainers", noun: "Ephemeral container" },
] as const;

/** One container of any kind, with where it is and how to name it to the tenant. */
export interface ContainerAt {
  container: Untrusted;
  /** JSON path, e.g. spec.initContainers[0]. */
  at: string;
  /** For messages, e.g. `Init container "setup"`. */
  who: string;
}

export function containersOf(spec: Untrusted): ContainerAt[] {
  const found: ContainerAt[] = [];
  for (const kind of containerKinds) {
    listOf(spec[kind.field]).forEach((entry, index) => {
      const container = objectOf(entry);
      if (!container) return;
      const name = textOf(container.name) ?? String(index);
      found.push({ container, at: `spec.${kind.field}[${index}]`, who: `${kind.noun} "${name}"` });
    });
  }
  return found;
}

/** How a check reports a violation: the rule, the JSON field path, one sentence for the tenant. */
export type Report = (rule: IsolationRule, field: string, message: string) => void;
