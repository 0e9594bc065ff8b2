/** Ports of the e2e instance (its own state dir and ports, so a dev instance is never touched). */
export const e2ePort = Number(process.env.E2E_PORT ?? 3100);
export const e2eOrigin = `http://localhost:${e2ePort}`;
/** The e2e instance's own state dir (wiped before each run by the test command). */
export const e2eStateDir = ".ring0/e2e";
