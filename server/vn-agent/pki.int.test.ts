/**
 * The vn-agent PKI of Ring0 in a cluster, in a Secret of a real API server: replicas starting
 * together agree on one CA (the loser of the create takes the winner's), a new name re-issues the
 * serving certificate only, and a client certificate one replica issues passes the other's check.
 */
import { X509Certificate } from "node:crypto";
import { describe, expect, it } from "vitest";
import { type KubeObject, readObject } from "@/server/k8s/apply";
import { testNamespace, testSuperCluster } from "@/server/k8s/test-cluster";
import { kubeRequest } from "@/server/k8s/transport";
import { certificateStillGood, loadVnAgentPki, VN_AGENT_PKI_SECRET } from "./pki";

const conn = testSuperCluster();

describe("the vn-agent PKI in a Secret (Ring0 in a cluster)", () => {
  it("is made once by replicas starting together, kept, and grows a serving name without a new CA", async () => {
    const [namespace, cleanup] = await testNamespace(conn, "vnpki");
    try {
      const source = { superCluster: conn, namespace };
      const [one, other] = await Promise.all([loadVnAgentPki(source), loadVnAgentPki(source)]);
      expect(other.servingCa.cert).toBe(one.servingCa.cert);
      expect(other.clientCa.cert).toBe(one.clientCa.cert);
      expect(other.serving.cert).toBe(one.serving.cert);
      const secret = await readObject<KubeObject & { data: Record<string, string> }>(conn, {
        apiVersion: "v1",
        kind: "Secret",
        metadata: { name: VN_AGENT_PKI_SECRET, namespace },
      });
      expect(Object.keys(secret.data).sort()).toEqual([
        "client-ca.crt",
        "client-ca.key",
        "serving-ca.crt",
        "serving-ca.key",
        "serving.crt",
        "serving.key",
      ]);

      // A later start reads it as it is.
      const again = await loadVnAgentPki(source);
      expect(again.serving.cert).toBe(one.serving.cert);

      // The webhooks' Service: its names and address join the serving certificate; the CAs stay.
      const grown = await loadVnAgentPki({
        ...source,
        serving: { ips: ["10.0.0.77"], names: [`ring0.${namespace}.svc`] },
      });
      expect(grown.servingCa.cert).toBe(one.servingCa.cert);
      expect(grown.clientCa.cert).toBe(one.clientCa.cert);
      expect(grown.serving.cert).not.toBe(one.serving.cert);
      const names = new X509Certificate(grown.serving.cert).subjectAltName ?? "";
      expect(names).toContain("IP Address:10.0.0.77");
      expect(names).toContain(`DNS:ring0.${namespace}.svc`);
      expect(names).toContain("IP Address:127.0.0.1");
      expect(
        new X509Certificate(grown.serving.cert).checkIssued(new X509Certificate(one.servingCa.cert)),
      ).toBe(true);

      // An IPv6 address names the same certificate however it is spelled: nothing is issued again.
      const v6 = await loadVnAgentPki({ ...source, serving: { ips: ["fd00::10"] } });
      const v6Again = await loadVnAgentPki({ ...source, serving: { ips: ["FD00:0:0:0:0:0:0:10"] } });
      expect(v6Again.serving.cert).toBe(v6.serving.cert);

      // A tenant API server's client certificate from one replica is good to the other.
      const issued = await one.issueTenantKubeletClient("acme");
      expect(await certificateStillGood(issued, other.clientCa)).toBe(true);
      expect(await certificateStillGood(issued, other.servingCa)).toBe(false);
    } finally {
      await cleanup();
    }
  });

  it("refuses a Secret that lost a CA rather than make a new one beside the replicas that hold the old", async () => {
    const [namespace, cleanup] = await testNamespace(conn, "vnpki-cut");
    try {
      const source = { superCluster: conn, namespace };
      await loadVnAgentPki(source);
      await kubeRequest(conn, {
        method: "PATCH",
        path: `/api/v1/namespaces/${namespace}/secrets/${VN_AGENT_PKI_SECRET}`,
        contentType: "application/json-patch+json",
        body: [
          { op: "remove", path: "/data/client-ca.crt" },
          { op: "remove", path: "/data/client-ca.key" },
        ],
      });
      await expect(loadVnAgentPki(source)).rejects.toThrow(
        `the Secret ${namespace}/${VN_AGENT_PKI_SECRET} lacks client-ca: restore it, or delete the Secret`,
      );
    } finally {
      await cleanup();
    }
  });
});
