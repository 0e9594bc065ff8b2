#!/usr/bin/env node
// The `ring0` command: runs cli/main.ts on the repository's own Node 24 (the `node` npm package)
// through tsx's loader, whatever `node` started this file. Exit code and signals pass through.
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const bundledNode = path.join(root, "node_modules", "node", "bin", "node");
const node = existsSync(bundledNode) ? bundledNode : process.execPath;
const loader = pathToFileURL(path.join(root, "node_modules", "tsx", "dist", "loader.mjs")).href;

const child = spawn(
  node,
  ["--no-warnings", "--import", loader, path.join(root, "cli", "main.ts"), ...process.argv.slice(2)],
  { stdio: "inherit", env: { ...process.env, TSX_TSCONFIG_PATH: path.join(root, "tsconfig.json") } },
);
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) {
  process.on(signal, () => child.kill(signal));
}
child.on("error", (error) => {
  process.stderr.write(`ring0: cannot start ${node}: ${error.message}\n`);
  process.exit(1);
});
child.on("exit", (code, signal) => {
  if (signal) process.kill(process.pid, signal);
  else process.exit(code ?? 1);
});
