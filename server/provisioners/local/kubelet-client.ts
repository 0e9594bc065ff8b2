/**
 * How a tenant's kube-apiserver reaches kubelets and Ring0's webhooks: through the vn-agents, with a
 * kubelet client certificate (CN=<tenant>, O=ring0:tenant-apiserver) from the vn-agent client CA,
 * verifying them with the vn-agent serving CA; and presenting the same certificate to every webhook
 * Ring0 registers (the quota webhook takes the tenant from it). All of it lives in `<dir>/vn-agent/`.
 */
import fs from "node:fs";
import path from "node:path";
import { certificateStillGood, ensureVnAgentPki } from "@/server/vn-agent/pki";
import { webhookClientKubeconfig } from "../webhook-kubeconfig";
import { readText, type TenantPaths, writeAtomically } from "./paths";

/** The kube-apiserver flags (without "--") that send its kubelet requests through the vn-agents. */
export function vnAgentKubeletArgs(
  dir: string,
): Record<"kubelet-client-certificate" | "kubelet-client-key" | "kubelet-certificate-authority", string> {
  return {
    "kubelet-client-certificate": path.join(dir, "vn-agent", "kubelet-client.crt"),
    "kubelet-client-key": path.join(dir, "vn-agent", "kubelet-client.key"),
    "kubelet-certificate-authority": path.join(dir, "vn-agent", "vn-agent-ca.crt"),
  };
}

/** The kubeconfig that makes the apiserver present its kubelet client certificate to every webhook. */
export function webhookKubeconfigPath(dir: string): string {
  return path.join(dir, "vn-agent", "webhook.kubeconfig");
}

/**
 * That kubeconfig: every validating webhook gets the tenant apiserver's client certificate ("*":
 * Ring0's webhook port is chosen when Ring0 starts). The quota webhook verifies it and takes the
 * tenant from it (./admission.ts loads it).
 */
export function webhookKubeconfig(dir: string): string {
  const base = path.join(dir, "vn-agent");
  return webhookClientKubeconfig({
    cert: path.join(base, "kubelet-client.crt"),
    key: path.join(base, "kubelet-client.key"),
  });
}

/**
 * The apiserver's kubelet client certificate and the vn-agent serving CA, written into the tenant's
 * dir; re-issued when missing, expiring or from another CA, and the webhook kubeconfig that
 * presents the same certificate to Ring0's webhooks. Returns the kube-apiserver flags that use them
 * (none without vn-agents: `vnAgentStateDir` undefined).
 */
export async function writeKubeletClient(
  vnAgentStateDir: string | undefined,
  tenant: string,
  paths: TenantPaths,
): Promise<Record<string, string>> {
  if (!vnAgentStateDir) return {};
  const pki = await ensureVnAgentPki(vnAgentStateDir);
  const args = vnAgentKubeletArgs(paths.dir);
  const [cert, key, ca] = [
    args["kubelet-client-certificate"],
    args["kubelet-client-key"],
    args["kubelet-certificate-authority"],
  ] as [string, string, string];
  fs.mkdirSync(path.dirname(cert), { recursive: true, mode: 0o700 });
  const current = { cert: readText(cert) ?? "", key: readText(key) ?? "" };
  if (!current.cert || !current.key || !(await certificateStillGood(current, pki.clientCa))) {
    const issued = await pki.issueTenantKubeletClient(tenant);
    fs.writeFileSync(`${key}.tmp`, issued.key, { mode: 0o600 });
    fs.renameSync(`${key}.tmp`, key);
    writeAtomically(cert, issued.cert);
  }
  if (readText(ca) !== pki.servingCa.cert) writeAtomically(ca, pki.servingCa.cert);
  const kubeconfig = webhookKubeconfigPath(paths.dir);
  const text = webhookKubeconfig(paths.dir);
  if (readText(kubeconfig) !== text) writeAtomically(kubeconfig, text);
  return args;
}
