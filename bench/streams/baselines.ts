/**
 * How the baseline arms reach the tenant's pods without Ring0: the real kubectl with the tenant
 * control plane's admin kubeconfig (run as child processes of the client process), and a
 * WebSocket exec straight to the tenant API server with its admin credentials.
 */
import { type ChildProcess, spawn } from "node:child_process";
import path from "node:path";
import type { ControlPlaneAccess } from "@/server/provisioners/types";

export interface KubectlTarget {
  binary: string;
  kubeconfig: string;
  cacheDir: string;
  pod: string;
}

/** A WebSocket exec straight to the tenant API server (tty, sh) with its admin credentials. */
export interface DirectExec {
  url: string;
  ca: string;
  cert: string;
  key: string;
}

const children = new Set<ChildProcess>();

export function kubectlProcess(target: KubectlTarget, args: string[]): ChildProcess {
  const child = spawn(
    target.binary,
    ["--kubeconfig", target.kubeconfig, "--cache-dir", target.cacheDir, ...args],
    {
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, HOME: path.dirname(target.cacheDir) },
    },
  );
  children.add(child);
  child.once("exit", () => children.delete(child));
  return child;
}

/** The clients' kubectl processes go with the client process. */
export function killKubectlProcesses(): void {
  for (const child of children) child.kill("SIGKILL");
}

/** A tty `sh` in `pod` over the API server's own exec, as its admin. */
export function directExec(access: ControlPlaneAccess, namespace: string, pod: string): DirectExec {
  return {
    url: `${access.server.replace(/^https:/, "wss:")}/api/v1/namespaces/${namespace}/pods/${pod}/exec?command=sh&stdin=true&stdout=true&tty=true`,
    ca: access.ca,
    cert: access.cert,
    key: access.key,
  };
}
