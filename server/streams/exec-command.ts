/**
 * The exec request a shell makes to an API server (v5.channel.k8s.io, tty; the command is a fixed
 * choice, never built from input) and what its status frame (channel 3) says about how it ended.
 */
import type { ExecQuery, ExecShell } from "@/server/core/stream-protocol";
import { PodKind } from "@/server/k8s/kinds/pod";

/** Tries bash and falls back to sh; a fixed script, never built from input. */
const autoShell = ["/bin/sh", "-c", "if command -v bash >/dev/null 2>&1; then exec bash; else exec sh; fi"];

export function shellCommand(shell: ExecShell): string[] {
  if (shell === "bash") return ["bash"];
  if (shell === "sh") return ["sh"];
  return autoShell;
}

export function execPath(query: ExecQuery, command: string[]): string {
  const params = new URLSearchParams();
  for (const part of command) params.append("command", part);
  params.set("stdin", "true");
  params.set("stdout", "true");
  params.set("tty", "true");
  if (query.container) params.set("container", query.container);
  const path = PodKind.path({ namespace: query.namespace ?? "", name: query.pod ?? "", subresource: "exec" });
  return `${path}?${params.toString()}`;
}

/** The exit code and reason in an exec status frame (channel 3), as kubelets and kwok report it. */
export function exitFromStatus(text: string): { code: number | null; reason: string } {
  let status: {
    status?: string;
    reason?: string;
    message?: string;
    details?: { causes?: Array<{ reason?: string; message?: string }> };
  };
  try {
    status = JSON.parse(text);
  } catch {
    return { code: null, reason: text.slice(0, 500) };
  }
  if (status.status === "Success") return { code: 0, reason: "exited" };
  const cause = status.details?.causes?.find((c) => c.reason === "ExitCode");
  if (cause?.message && /^\d+$/.test(cause.message)) return { code: Number(cause.message), reason: "exited" };
  const inMessage = /exit (?:status|code) (\d+)/.exec(status.message ?? "");
  if (inMessage) return { code: Number(inMessage[1]), reason: "exited" };
  return { code: null, reason: status.message ?? status.reason ?? "the command failed" };
}
