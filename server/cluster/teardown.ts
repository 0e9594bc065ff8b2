/**
 * A marker in the state dir while the local world is being torn down (`npm run cluster:down`, the
 * e2e teardown), from another process than the Ring0 that may still be running: its watchdogs see
 * components vanish one by one and must not start them again.
 */
import fs from "node:fs";
import path from "node:path";

const markerOf = (stateDir: string) => path.join(path.resolve(stateDir), ".tearing-down");

export function markTearingDown(stateDir: string): void {
  fs.mkdirSync(path.resolve(stateDir), { recursive: true });
  fs.writeFileSync(markerOf(stateDir), `${process.pid}\n`);
}

export function clearTearingDown(stateDir: string): void {
  fs.rmSync(markerOf(stateDir), { force: true });
}

export function isTearingDown(stateDir: string): boolean {
  return fs.existsSync(markerOf(stateDir));
}
