/**
 * An API server's readiness as the watchdog asks it (server/tenants/watchdog.ts): GET /readyz with a
 * hard deadline, and what a failing answer says about which component is at fault. Shared by the
 * provisioners' `probe`s.
 */
import https from "node:https";
import type { ControlPlaneAccess, ControlPlaneFault } from "./types";

/**
 * GET /readyz with a hard deadline over connect, TLS and body (a stopped process accepts TCP
 * connections and then says nothing): undefined when it answers 200, else what went wrong.
 * A fresh connection each time, so a socket to a dead process is never reused.
 */
export function readyzProblem(access: ControlPlaneAccess, timeoutMs: number): Promise<string | undefined> {
  return new Promise((resolve) => {
    const url = new URL("/readyz?verbose", access.server);
    const request = https.get(
      url,
      { ca: access.ca, cert: access.cert, key: access.key, agent: false },
      (response) => {
        let text = "";
        response.setEncoding("utf8");
        response.on("data", (chunk: string) => {
          if (text.length < 4096) text += chunk;
        });
        response.on("end", () => {
          clearTimeout(timer);
          resolve(response.statusCode === 200 ? undefined : `HTTP ${response.statusCode}: ${text.trim()}`);
        });
        response.on("error", (error) => {
          clearTimeout(timer);
          resolve(error.message);
        });
      },
    );
    const timer = setTimeout(() => {
      request.destroy();
      resolve(`no answer within ${timeoutMs} ms`);
    }, timeoutMs);
    request.on("error", (error) => {
      clearTimeout(timer);
      resolve(error.message);
    });
  });
}

/**
 * The fault a failed readiness answer shows, or undefined for none. The API server names its
 * failing checks: a failing etcd check is etcd's fault, not its own.
 */
export function unresponsiveFault(problem: string | undefined): ControlPlaneFault | undefined {
  if (!problem) return undefined;
  const component = /\[-\]etcd\b/.test(problem) ? "etcd" : "kube-apiserver";
  return {
    component,
    kind: "unresponsive",
    message:
      component === "etcd"
        ? "etcd does not answer the API server"
        : "kube-apiserver does not answer its readiness check",
    detail: problem.slice(0, 500),
  };
}
