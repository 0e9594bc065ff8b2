import { createPrivateKey, createPublicKey, createSign, createVerify, X509Certificate } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import * as x509 from "@/server/pki/x509";
import { controlPlanePkiNames } from "./kubernetes/manifests";
import { type ControlPlanePki, ensurePki, pkiFromFiles, pkiToFiles, RENEW_BEFORE_DAYS } from "./pki";

const names = controlPlanePkiNames("acme", "cluster.local");
const issuedAt = new Date("2026-03-01T00:00:00Z");
let pki: ControlPlanePki;
let issued: string[];

beforeAll(async () => {
  ({ pki, issued } = await ensurePki(names, {}, issuedAt));
});

function parsed(pem: string) {
  return new X509Certificate(pem);
}

function keyUsages(pem: string) {
  const cert = new x509.X509Certificate(pem);
  return {
    keyUsage: cert.getExtension(x509.KeyUsagesExtension)?.usages ?? 0,
    extended: cert.getExtension(x509.ExtendedKeyUsageExtension)?.usages ?? [],
    ca: cert.getExtension(x509.BasicConstraintsExtension)?.ca,
  };
}

describe("ensurePki", () => {
  it("issues everything on first use", () => {
    expect(issued.sort()).toEqual(
      [
        "admin",
        "apiserver",
        "apiserverEtcdClient",
        "ca",
        "controllerManager",
        "etcdCa",
        "etcdServer",
        "serviceAccount",
      ].sort(),
    );
  });

  it("signs the Kubernetes leaves with the CA and the etcd leaves with the etcd CA only", () => {
    const ca = parsed(pki.ca.cert);
    const etcdCa = parsed(pki.etcdCa.cert);
    expect(ca.ca).toBe(true);
    expect(etcdCa.ca).toBe(true);
    for (const leaf of [pki.apiserver, pki.admin, pki.controllerManager]) {
      expect(parsed(leaf.cert).verify(ca.publicKey)).toBe(true);
      expect(parsed(leaf.cert).checkIssued(ca)).toBe(true);
      expect(parsed(leaf.cert).verify(etcdCa.publicKey)).toBe(false);
    }
    for (const leaf of [pki.etcdServer, pki.apiserverEtcdClient]) {
      expect(parsed(leaf.cert).verify(etcdCa.publicKey)).toBe(true);
      expect(parsed(leaf.cert).verify(ca.publicKey)).toBe(false);
    }
  });

  it("pairs every certificate with its private key", () => {
    for (const pair of [pki.ca, pki.apiserver, pki.admin, pki.controllerManager, pki.etcdServer]) {
      expect(parsed(pair.cert).checkPrivateKey(createPrivateKey(pair.key))).toBe(true);
    }
  });

  it("gives the API server serving cert its service names, localhost and 127.0.0.1", () => {
    const sans = parsed(pki.apiserver.cert).subjectAltName ?? "";
    for (const name of [
      "kube-apiserver.ring0-cp-acme.svc",
      "kube-apiserver.ring0-cp-acme.svc.cluster.local",
      "kubernetes.default.svc",
      "localhost",
    ]) {
      expect(sans).toContain(`DNS:${name}`);
    }
    expect(sans).toContain("IP Address:127.0.0.1");
    expect(parsed(pki.apiserver.cert).checkHost("kube-apiserver.ring0-cp-acme.svc")).toBeDefined();
    expect(parsed(pki.etcdServer.cert).subjectAltName).toContain("DNS:etcd-0.etcd.ring0-cp-acme.svc");
  });

  it("sets key usages: CAs sign certificates, leaves sign and serve or authenticate", () => {
    const ca = keyUsages(pki.ca.cert);
    expect(ca.ca).toBe(true);
    expect(ca.keyUsage & x509.KeyUsageFlags.keyCertSign).toBeTruthy();
    expect(ca.keyUsage & x509.KeyUsageFlags.cRLSign).toBeTruthy();

    const serving = keyUsages(pki.apiserver.cert);
    expect(serving.ca).toBe(false);
    expect(serving.keyUsage & x509.KeyUsageFlags.digitalSignature).toBeTruthy();
    expect(serving.keyUsage & x509.KeyUsageFlags.keyCertSign).toBeFalsy();
    expect(serving.extended).toEqual([x509.ExtendedKeyUsage.serverAuth]);

    expect(keyUsages(pki.admin.cert).extended).toEqual([x509.ExtendedKeyUsage.clientAuth]);
    expect(keyUsages(pki.controllerManager.cert).extended).toEqual([x509.ExtendedKeyUsage.clientAuth]);
    expect(keyUsages(pki.etcdServer.cert).extended).toEqual([
      x509.ExtendedKeyUsage.serverAuth,
      x509.ExtendedKeyUsage.clientAuth,
    ]);
  });

  it("makes the admin a system:masters member and the controller manager its system user", () => {
    expect(parsed(pki.admin.cert).subject).toContain("O=system:masters");
    expect(parsed(pki.admin.cert).subject).toContain("CN=ring0-admin");
    expect(parsed(pki.controllerManager.cert).subject).toContain("CN=system:kube-controller-manager");
  });

  it("gives the service-account key pair matching halves", () => {
    const signer = createSign("SHA256").update("token");
    const signature = signer.sign(pki.serviceAccount.privateKey);
    const verifier = createVerify("SHA256").update("token");
    expect(verifier.verify(createPublicKey(pki.serviceAccount.publicKey), signature)).toBe(true);
  });

  it("keeps a complete, current PKI as it is", async () => {
    const again = await ensurePki(names, pkiFromFiles(pkiToFiles(pki)), issuedAt);
    expect(again.issued).toEqual([]);
    expect(again.pki).toEqual(pki);
  });

  it("fills in what is missing with the existing CA, never a new one", async () => {
    const { admin: _admin, serviceAccount: _sa, ...partial } = pki;
    const again = await ensurePki(names, partial, issuedAt);
    expect(again.issued.sort()).toEqual(["admin", "serviceAccount"]);
    expect(again.pki.ca).toEqual(pki.ca);
    expect(parsed(again.pki.admin.cert).verify(parsed(pki.ca.cert).publicKey)).toBe(true);
  });

  it("renews leaves close to expiry and those whose names changed, keeping the CAs", async () => {
    const nearExpiry = new Date(
      parsed(pki.admin.cert).validToDate.getTime() - (RENEW_BEFORE_DAYS - 1) * 24 * 3600 * 1000,
    );
    const renewed = await ensurePki(names, pki, nearExpiry);
    expect(renewed.issued).toEqual(expect.arrayContaining(["apiserver", "admin", "etcdServer"]));
    expect(renewed.issued).not.toContain("ca");
    expect(renewed.pki.ca).toEqual(pki.ca);

    const otherDomain = await ensurePki(controlPlanePkiNames("acme", "example.internal"), pki, issuedAt);
    expect(otherDomain.issued.sort()).toEqual(["apiserver", "etcdServer"]);
  });

  it("round-trips through Secret files", () => {
    expect(pkiFromFiles(pkiToFiles(pki))).toEqual(pki);
    expect(Object.keys(pkiToFiles(pki))).toContain("ca.crt");
  });
});
