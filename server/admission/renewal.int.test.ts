/**
 * The webhooks' (and the in-process vn-agents') serving certificate while Ring0 runs: read again on a timer, so a certificate
 * renewed by another replica (a newer one in the shared store) or near its end (renewed here) is
 * what new connections get, without a restart (an expired one under a Fail policy would refuse
 * every tenant's writes).
 */
import { X509Certificate } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import tls from "node:tls";
import { afterAll, describe, expect, inject, it } from "vitest";
import { localSuperCluster } from "@/server/cluster/local";
import { POD_API_ADDRESS } from "@/server/cluster/real-node/plan";
import { eventually, testSuperCluster } from "@/server/k8s/test-cluster";
import { createLogger } from "@/server/logger";
import { issueLeaf } from "@/server/pki/certificates";
import { loadVnAgentPki, vnAgentPkiDir } from "@/server/vn-agent/pki";
import { startVnAgents } from "@/server/vn-agent/vn-agents";
import { startAdmission } from "./start";

const stateDir = fs.mkdtempSync(path.join(os.tmpdir(), "ring0-webhook-renewal-"));
afterAll(() => fs.rmSync(stateDir, { recursive: true, force: true }));

/** The certificate a new TLS connection to the webhooks gets (PEM-free: its fingerprint and end). */
function served(port: number): Promise<{ fingerprint: string; validTo: number }> {
  return new Promise((resolve, reject) => {
    // Only the server's certificate is wanted: the handshake fails after it without a client one.
    const socket = tls.connect({ host: "127.0.0.1", port, rejectUnauthorized: false }, () => {
      const peer = socket.getPeerCertificate();
      socket.destroy();
      resolve({ fingerprint: peer.fingerprint256, validTo: Date.parse(peer.valid_to) });
    });
    socket.on("error", reject);
  });
}

const fingerprint = (pem: string) => new X509Certificate(pem).fingerprint256;

describe("the webhooks' serving certificate while Ring0 runs", () => {
  it("serves one renewed in the store, and renews one near its end, without a restart", async () => {
    const pki = await loadVnAgentPki(stateDir);
    const admission = await startAdmission({
      stateDir,
      tenants: { find: async () => ({ resource: undefined }) },
      directory: { lookup: async () => ({ state: "unknown" }) } as never,
      logger: createLogger({}, "warn"),
      recordRefusals: false,
      renewEveryMs: 100,
    });
    try {
      expect((await served(admission.port)).fingerprint).toBe(fingerprint(pki.serving.cert));
      const write = (pair: { cert: string; key: string }) => {
        fs.writeFileSync(path.join(vnAgentPkiDir(stateDir), "serving.crt"), pair.cert);
        fs.writeFileSync(path.join(vnAgentPkiDir(stateDir), "serving.key"), pair.key);
      };
      const leaf = (days: number) =>
        issueLeaf({
          issuer: pki.servingCa,
          subject: "CN=ring0-vn-agent",
          usages: ["serverAuth"],
          dns: ["localhost"],
          ips: ["127.0.0.1", POD_API_ADDRESS],
          days,
          now: new Date(),
        });
      // Another replica renewed it: this one serves that one next.
      const renewedElsewhere = await leaf(365);
      write(renewedElsewhere);
      await eventually(
        async () =>
          (await served(admission.port)).fingerprint === fingerprint(renewedElsewhere.cert)
            ? true
            : undefined,
        10_000,
      );
      // One with ten days left: renewed here, stored, and served.
      const ending = await leaf(10);
      write(ending);
      const renewed = await eventually(async () => {
        const now = await served(admission.port);
        return now.fingerprint !== fingerprint(renewedElsewhere.cert) &&
          now.fingerprint !== fingerprint(ending.cert)
          ? now
          : undefined;
      }, 10_000);
      expect(renewed.validTo - Date.now()).toBeGreaterThan(300 * 24 * 60 * 60 * 1000);
      const stored = fs.readFileSync(path.join(vnAgentPkiDir(stateDir), "serving.crt"), "utf8");
      expect(fingerprint(stored)).toBe(renewed.fingerprint);
    } finally {
      await admission.stop();
    }
  });

  it("serves the vn-agents' renewed certificate too, without a restart", async () => {
    const agentsDir = fs.mkdtempSync(path.join(os.tmpdir(), "ring0-vn-agent-renewal-"));
    const pki = await loadVnAgentPki(agentsDir);
    const agents = await startVnAgents({
      superCluster: testSuperCluster(),
      stateDir: agentsDir,
      logger: createLogger({}, "warn"),
      kubeletTls: await localSuperCluster({
        stateDir: inject("superStateDir"),
        logger: createLogger({}, "warn"),
      }).kubeletClient(),
      renewEveryMs: 100,
    });
    try {
      await agents.ready();
      const [endpoint] = [...agents.endpoints().values()];
      if (!endpoint) throw new Error("no vn-agent started");
      expect((await served(endpoint.port)).fingerprint).toBe(fingerprint(pki.serving.cert));
      const renewed = await issueLeaf({
        issuer: pki.servingCa,
        subject: "CN=ring0-vn-agent",
        usages: ["serverAuth"],
        dns: ["localhost"],
        ips: ["127.0.0.1", POD_API_ADDRESS],
        days: 365,
        now: new Date(),
      });
      fs.writeFileSync(path.join(vnAgentPkiDir(agentsDir), "serving.crt"), renewed.cert);
      fs.writeFileSync(path.join(vnAgentPkiDir(agentsDir), "serving.key"), renewed.key);
      await eventually(
        async () =>
          (await served(endpoint.port)).fingerprint === fingerprint(renewed.cert) ? true : undefined,
        10_000,
      );
    } finally {
      await agents.stop();
      fs.rmSync(agentsDir, { recursive: true, force: true });
    }
  });
});
