/**
 * How a bench talks to an API server, as a person's tools would: plain HTTPS requests (a bearer
 * token through the gateway, or a client certificate directly) and the real kubectl.
 */
import https from "node:https";
import path from "node:path";
import { CommandError, type RunResult, run } from "@/server/cluster/process";

/** Who a plain HTTPS request is: a bearer token (through the gateway) or a client certificate. */
export interface HttpsIdentity {
  ca: string;
  token?: string;
  cert?: string;
  key?: string;
}

export function httpsAgent(identity: HttpsIdentity, keepAlive: boolean): https.Agent {
  return new https.Agent({
    keepAlive,
    maxSockets: keepAlive ? 1 : Number.POSITIVE_INFINITY,
    ca: identity.ca,
    cert: identity.cert,
    key: identity.key,
  });
}

export interface HttpsAnswer {
  status: number;
  body: string;
}

/** One request; the body is read to the end. */
export function httpsRequest(
  url: string,
  identity: HttpsIdentity,
  options: {
    agent?: https.Agent;
    method?: string;
    body?: unknown;
    timeoutMs?: number;
    headers?: Record<string, string | string[]>;
  } = {},
): Promise<HttpsAnswer> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | string[]> = { accept: "application/json", ...options.headers };
    if (identity.token) headers.authorization = `Bearer ${identity.token}`;
    if (options.body !== undefined) headers["content-type"] = "application/json";
    const request = https.request(
      url,
      {
        method: options.method ?? "GET",
        headers,
        agent: options.agent ?? httpsAgent(identity, false),
        timeout: options.timeoutMs ?? 10_000,
      },
      (response) => {
        let body = "";
        response.setEncoding("utf8");
        response.on("data", (chunk: string) => {
          body += chunk;
        });
        response.on("end", () => resolve({ status: response.statusCode ?? 0, body }));
        response.on("error", reject);
      },
    );
    request.on("timeout", () => request.destroy(new Error(`timed out: ${url}`)));
    request.on("error", reject);
    request.end(options.body === undefined ? undefined : JSON.stringify(options.body));
  });
}

/** kubectl with its own HOME and discovery cache; a non-zero exit is returned, not thrown. */
export async function kubectl(
  binary: string,
  kubeconfig: string,
  cacheDir: string,
  args: string[],
): Promise<RunResult> {
  try {
    return await run(binary, ["--kubeconfig", kubeconfig, "--cache-dir", cacheDir, ...args], {
      timeoutMs: 60_000,
      env: { PATH: process.env.PATH, HOME: path.dirname(cacheDir) },
    });
  } catch (error) {
    if (error instanceof CommandError) return error.result;
    throw error;
  }
}
