/**
 * Which port each node's vn-agent listens on, kept in `<stateDir>/vn-agent-ports.json` so a
 * restarted Ring0 listens where it did before: the tenants' vNodes keep pointing their kubelet
 * endpoints at the right agent. A recorded port that is taken now is replaced by a fresh one (and
 * recorded); nodes that left the super cluster are dropped.
 */
import fs from "node:fs";
import path from "node:path";

export interface PortBook {
  /** The port recorded for `node`, if any. */
  get(node: string): number | undefined;
  /** Record (and persist) the port `node`'s agent listens on. */
  record(node: string, port: number): void;
  /** Drop `node` (it left the super cluster). */
  forget(node: string): void;
  /** Drop every node not in `nodes` (the super cluster's full node list). */
  keepOnly(nodes: ReadonlySet<string>): void;
  entries(): Record<string, number>;
}

export function vnAgentPortsFile(stateDir: string): string {
  return path.join(path.resolve(stateDir), "vn-agent-ports.json");
}

function isPort(value: unknown): value is number {
  return typeof value === "number" && Number.isInteger(value) && value > 0 && value < 65_536;
}

/** What the file says, ignoring anything that is not a node → port entry (a damaged file starts afresh). */
function readPorts(file: string): Map<string, number> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(fs.readFileSync(file, "utf8"));
  } catch {
    return new Map();
  }
  const ports = (parsed as { ports?: unknown } | null)?.ports;
  if (!ports || typeof ports !== "object") return new Map();
  return new Map(
    Object.entries(ports as Record<string, unknown>).filter((entry): entry is [string, number] =>
      isPort(entry[1]),
    ),
  );
}

export function openPortBook(file: string): PortBook {
  const ports = readPorts(file);

  /** Written to a temporary file and renamed over the old one, so a crash never leaves half a file. */
  const save = () => {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    const temporary = `${file}.${process.pid}.tmp`;
    const sorted = Object.fromEntries([...ports.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
    fs.writeFileSync(temporary, `${JSON.stringify({ ports: sorted }, null, 2)}\n`, { mode: 0o600 });
    fs.renameSync(temporary, file);
  };

  return {
    get: (node) => ports.get(node),
    record(node, port) {
      if (ports.get(node) === port) return;
      ports.set(node, port);
      save();
    },
    forget(node) {
      if (ports.delete(node)) save();
    },
    keepOnly(nodes) {
      let changed = false;
      for (const node of [...ports.keys()]) {
        if (!nodes.has(node)) changed = ports.delete(node) || changed;
      }
      if (changed) save();
    },
    entries: () => Object.fromEntries(ports),
  };
}
