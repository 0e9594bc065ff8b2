/**
 * A GET over HTTPS for the gateway's tests (its listener, its TLS): the status and body as text,
 * the CA given explicitly, so nothing of the system's trust store is involved.
 */
import https from "node:https";

export function httpsGet(
  target: { hostname: string; port: number; path: string },
  ca: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    https
      .get({ ...target, ca, headers }, (response) => {
        let body = "";
        response.setEncoding("utf8");
        response.on("data", (chunk: string) => {
          body += chunk;
        });
        response.on("end", () => resolve({ status: response.statusCode ?? 0, body }));
      })
      .on("error", reject);
  });
}
