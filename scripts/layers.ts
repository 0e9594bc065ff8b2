/**
 * The house plan as a check: every folder of server/ sits on a floor, and no file imports from a
 * floor above its own (a floor may use its own and those below). Run by `./ring0 test` (`npm run
 * layers`); exits non-zero naming each import against the plan. A new folder must be given a floor.
 */
import fs from "node:fs";
import path from "node:path";

/** Floors from the ground up; a module's floor is its folder's (or, for a file in server/, its own). */
export const floors: ReadonlyArray<{ name: string; rooms: readonly string[] }> = [
  { name: "core", rooms: ["core", "errors.ts", "logger.ts", "log-ring.ts", "proxy", "pki"] },
  { name: "platform", rooms: ["k8s", "db", "generated", "controllers"] },
  {
    name: "domains",
    rooms: [
      // Configuration validates the domains' policies with their own parsers.
      "env.ts",
      "auth",
      "users",
      "tokens",
      "audit",
      "iam",
      "tenants",
      "quotas",
      "admission",
      "sharing",
      "kubeconfigs",
      "provisioners",
      "cluster",
      "syncer",
      "vn-agent",
      "nodes",
    ],
  },
  // Workloads read the tenant's control plane as the user through the gateway's impersonating client.
  { name: "edges", rooms: ["gateway", "streams", "ws", "health", "workloads"] },
  { name: "api", rooms: ["api"] },
  { name: "runtime", rooms: ["runtime"] },
];

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), "..");

/** The room of a file or import target under server/: its top folder, or the file (env.ts). */
function roomOf(target: string): string | undefined {
  const relative = path.relative(path.join(root, "server"), target);
  if (relative.startsWith("..")) return undefined;
  const first = relative.split(path.sep)[0] as string;
  if (!first.includes(".") && fs.existsSync(path.join(root, "server", `${first}.ts`))) return `${first}.ts`;
  return first;
}

function floorOf(room: string): number {
  const index = floors.findIndex((floor) => floor.rooms.includes(room));
  if (index === -1) throw new Error(`server/${room} is on no floor: add it to scripts/layers.ts`);
  return index;
}

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== "generated") out.push(...sourceFiles(full));
    } else if (/\.(ts|tsx)$/.test(entry.name) && !/\.test\.tsx?$/.test(entry.name)) {
      out.push(full);
    }
  }
  return out;
}

/** `from "<specifier>"` of every import and re-export (type-only ones too: they still tie the plan). */
function importsOf(text: string): string[] {
  const found: string[] = [];
  for (const match of text.matchAll(/(?:import|export)\s[^;]*?from\s+"([^"]+)"/g))
    found.push(match[1] as string);
  for (const match of text.matchAll(/import\(\s*"([^"]+)"\s*\)/g)) found.push(match[1] as string);
  return found;
}

function resolve(from: string, specifier: string): string | undefined {
  if (specifier.startsWith("@/")) return path.join(root, specifier.slice(2));
  if (specifier.startsWith(".")) return path.resolve(path.dirname(from), specifier);
  return undefined;
}

/** Every import from a lower floor's file to a higher floor's room: "server/a/x.ts -> server/b". */
export function crossings(): string[] {
  const found = new Set<string>();
  for (const file of sourceFiles(path.join(root, "server"))) {
    const fromRoom = roomOf(file);
    if (!fromRoom) continue;
    const fromFloor = floorOf(fromRoom);
    for (const specifier of importsOf(fs.readFileSync(file, "utf8"))) {
      const target = resolve(file, specifier);
      if (!target) continue;
      const toRoom = roomOf(target);
      if (!toRoom || toRoom === fromRoom) continue;
      if (floorOf(toRoom) > fromFloor) {
        found.add(`${path.relative(root, file)} -> server/${toRoom}`);
      }
    }
  }
  return [...found].sort();
}

function main() {
  const found = crossings();
  for (const crossing of found) {
    process.stderr.write(`imports against the house plan (a floor below imports one above): ${crossing}\n`);
  }
  process.stdout.write(
    `house plan: ${floors.map((floor) => floor.name).join(" → ")}; ${found.length} imports against it\n`,
  );
  process.exit(found.length > 0 ? 1 : 0);
}

if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(new URL(import.meta.url).pathname))
  main();
