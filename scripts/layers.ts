/**
 * The house plan as a check: every folder of server/ sits on a floor, and no file imports from a
 * floor above its own (a floor may use its own and those below). Run by `./ring0 test` (`npm run
 * layers`); exits non-zero naming each import against the plan. A new folder must be given a floor.
 *
 * A second check keeps server code out of the browser bundle: modules under components/ and
 * "use client" files under app/ take from server/ only types (`import type`) and the isomorphic
 * leaves of server/core/, which in turn import nothing but npm packages and each other.
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
      // Configuration validates two domain policies with their leaf parsers (sharing/policy-schema.ts,
      // syncer/isolation-schema.ts); importing them keeps it on this floor.
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
      // Ring0 users inside tenant control planes: their identity there, and the client acting as them.
      "impersonation",
      "workloads",
    ],
  },
  { name: "edges", rooms: ["gateway", "streams", "health"] },
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

/** Where the browser may reach into server/: the isomorphic leaves. */
const isomorphic = path.join(root, "server", "core");

function isClientModule(file: string, text: string): boolean {
  const relative = path.relative(root, file);
  if (relative.startsWith(`components${path.sep}`)) return true;
  return relative.startsWith(`app${path.sep}`) && /^\s*["']use client["']/.test(text);
}

/** Value imports (not `import type`/`export type`) and re-exports with their specifiers. */
function valueImportsOf(text: string): string[] {
  const found: string[] = [];
  for (const match of text.matchAll(/^\s*(?:import|export)\s+(type\s)?[^;]*?from\s+"([^"]+)"/gm))
    if (!match[1]) found.push(match[2] as string);
  for (const match of text.matchAll(/^\s*import\s+"([^"]+)"/gm)) found.push(match[1] as string);
  for (const match of text.matchAll(/import\(\s*"([^"]+)"\s*\)/g)) found.push(match[1] as string);
  return found;
}

/**
 * Every value import of server code outside server/core/ by a browser module, and every import of
 * server/core/ beyond itself: "components/x.tsx -> server/quotas/usage".
 */
export function browserImports(): string[] {
  const found = new Set<string>();
  const inServer = (target: string) => !path.relative(path.join(root, "server"), target).startsWith("..");
  const inCore = (target: string) => !path.relative(isomorphic, target).startsWith("..");
  const clientFiles = [...sourceFiles(path.join(root, "components")), ...sourceFiles(path.join(root, "app"))];
  for (const file of clientFiles) {
    const text = fs.readFileSync(file, "utf8");
    if (!isClientModule(file, text)) continue;
    for (const specifier of valueImportsOf(text)) {
      const target = resolve(file, specifier);
      if (target && inServer(target) && !inCore(target))
        found.add(`${path.relative(root, file)} -> ${path.relative(root, target)}`);
    }
  }
  for (const file of sourceFiles(isomorphic)) {
    for (const specifier of importsOf(fs.readFileSync(file, "utf8"))) {
      const target = resolve(file, specifier);
      if (target && !inCore(target))
        found.add(`${path.relative(root, file)} -> ${path.relative(root, target)}`);
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
  const browser = browserImports();
  for (const crossing of browser) {
    process.stderr.write(
      `server code in the browser (import type, or move the module into server/core/): ${crossing}\n`,
    );
  }
  process.stdout.write(
    `browser: server/ only as types or server/core/; ${browser.length} imports against it\n`,
  );
  process.exit(found.length + browser.length > 0 ? 1 : 0);
}

if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(new URL(import.meta.url).pathname))
  main();
