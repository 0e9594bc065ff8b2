/**
 * Watch-event latency: one ConfigMap watch through the gateway and one direct, open at the same
 * time; the time from sending a ConfigMap create to its ADDED event on each.
 */
import https from "node:https";
import { type HttpsIdentity, httpsAgent, httpsRequest } from "../lib/clients";
import { ratio, say, summary } from "../lib/figures";
import type { CleanupStack } from "../lib/run";
import type { Arm, GatewayWorld } from "./world";

interface WatchStream {
  close(): void;
}

/** A ConfigMap watch in `default`; calls `onAdded(name)` as each ADDED event arrives. */
function openWatch(
  base: string,
  identity: HttpsIdentity,
  resourceVersion: string,
  onAdded: (name: string) => void,
): Promise<WatchStream> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { accept: "application/json" };
    if (identity.token) headers.authorization = `Bearer ${identity.token}`;
    const request = https.request(
      `${base}/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=${resourceVersion}`,
      { headers, agent: httpsAgent(identity, false) },
      (response) => {
        if (response.statusCode !== 200) {
          reject(new Error(`watch via ${base} answered ${response.statusCode}`));
          response.resume();
          return;
        }
        let buffered = "";
        response.setEncoding("utf8");
        response.on("data", (chunk: string) => {
          buffered += chunk;
          let newline = buffered.indexOf("\n");
          while (newline >= 0) {
            const line = buffered.slice(0, newline);
            buffered = buffered.slice(newline + 1);
            newline = buffered.indexOf("\n");
            if (!line.trim()) continue;
            const event = JSON.parse(line) as { type: string; object?: { metadata?: { name?: string } } };
            if (event.type === "ADDED" && event.object?.metadata?.name) onAdded(event.object.metadata.name);
          }
        });
        response.on("error", () => undefined);
        resolve({ close: () => request.destroy() });
      },
    );
    request.on("error", reject);
    request.end();
  });
}

/** Both watches open at once, one create at a time, the arrival on each (after 5 warm-ups). */
export async function measureWatchLatency(world: GatewayWorld, cleanup: CleanupStack, n: number) {
  const { gateway: viaGateway, direct } = world.arms;
  const list = await httpsRequest(`${direct.base}/api/v1/namespaces/default/configmaps`, direct.identity, {
    agent: world.agents.direct,
  });
  const resourceVersion = (JSON.parse(list.body) as { metadata: { resourceVersion: string } }).metadata
    .resourceVersion;
  const arrivals = new Map<string, { gateway?: number; direct?: number; done?: () => void }>();
  const arrived = (arm: Arm) => (name: string) => {
    const entry = arrivals.get(name) ?? {};
    entry[arm] = performance.now();
    arrivals.set(name, entry);
    if (entry.gateway !== undefined && entry.direct !== undefined) entry.done?.();
  };
  const watches = await Promise.all([
    openWatch(viaGateway.base, viaGateway.identity, resourceVersion, arrived("gateway")),
    openWatch(direct.base, direct.identity, resourceVersion, arrived("direct")),
  ]);
  cleanup.push("watches", () => {
    for (const watch of watches) watch.close();
  });
  const watch = { gateway: [] as number[], direct: [] as number[] };
  for (let i = -5; i < n; i++) {
    const name = `bench-${i + 5}`;
    const both = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no watch event for ${name} on both watches`)), 15_000);
      arrivals.set(name, {
        done: () => {
          clearTimeout(timer);
          resolve();
        },
      });
    });
    const started = performance.now();
    const created = await httpsRequest(
      `${direct.base}/api/v1/namespaces/default/configmaps`,
      direct.identity,
      {
        agent: world.agents.direct,
        method: "POST",
        body: { apiVersion: "v1", kind: "ConfigMap", metadata: { name }, data: { i: String(i) } },
      },
    );
    if (created.status !== 201)
      throw new Error(`creating ConfigMap ${name}: ${created.status} ${created.body}`);
    await both;
    const entry = arrivals.get(name) as { gateway: number; direct: number };
    if (i < 0) continue; // warm-up
    watch.gateway.push(entry.gateway - started);
    watch.direct.push(entry.direct - started);
  }
  const result = {
    gateway: summary(watch.gateway, 2),
    direct: summary(watch.direct, 2),
    ratioP50: ratio(summary(watch.gateway, 2).p50, summary(watch.direct, 2).p50),
    ratioP95: ratio(summary(watch.gateway, 2).p95, summary(watch.direct, 2).p95),
    addedP50Ms: +(summary(watch.gateway, 2).p50 - summary(watch.direct, 2).p50).toFixed(2),
  };
  say(`watch event latency: ${JSON.stringify(result)}`);
  return result;
}
