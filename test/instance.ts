/**
 * A separate Ring0 instance for e2e tests and benchmarks: its own ports and state dir, so a
 * developer's running instance is never touched; and Chromium launched the way this project
 * runs it (Debian's build, no background traffic to a closed network).
 */
export function instanceEnvironment(options: {
  port: number;
  stateDir: string;
  logLevel?: "debug" | "info" | "warn" | "error";
}): Record<string, string> {
  return {
    PORT: String(options.port),
    IAM_PORT: String(options.port + 1),
    EMBEDDED_POSTGRES_PORT: String(options.port + 10),
    RING0_GATEWAY_PORT: String(options.port + 443),
    RING0_STATE_DIR: options.stateDir,
    // Simulated nodes only: one host runs one world with real nodes (a developer's may be running),
    // and these suites check the panel, not what a container does (server/cluster/real-node has its own).
    RING0_REAL_NODES: "0",
    NEXTAUTH_URL: `http://localhost:${options.port}`,
    LOG_LEVEL: options.logLevel ?? "warn",
  };
}

export const chromiumLaunchOptions = {
  executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
  args: [
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-quic",
    "--no-first-run",
  ],
};
