/**
 * A tenant API server's admission configuration, in `<dir>/admission/`: Ring0's admission policies
 * from files (../admission-policies.ts; `validating/` and `mutating/` hold one List each), and, with
 * vn-agents, the client certificate the API server presents to Ring0's webhooks (./kubelet-client.ts).
 * The API server reads the configuration once at start and the policy files again every minute.
 */
import fs from "node:fs";
import path from "node:path";
import {
  manifestList,
  STATIC_ADMISSION_FEATURE_GATE,
  staticAdmissionPolicies,
  staticPolicyPlugins,
} from "../admission-policies";
import { readText, writeAtomically } from "./paths";

/** Every file of the admission configuration, by path (pure: unit-tested). */
export function admissionFiles(dir: string, webhookKubeconfig?: string): Record<string, string> {
  const base = path.join(dir, "admission");
  const dirs = { validating: path.join(base, "validating"), mutating: path.join(base, "mutating") };
  const policies = staticAdmissionPolicies();
  const plugins: object[] = [
    ...staticPolicyPlugins(dirs),
    ...(webhookKubeconfig
      ? [
          {
            // Every validating webhook gets the tenant API server's client certificate ("*": Ring0's
            // webhook port is chosen when Ring0 starts). Tenant admins' own webhooks see it too:
            // only the certificate, which proves nothing without its key, and only on the tenant's
            // own pods, the one place the egress wall lets their webhooks reach.
            name: "ValidatingAdmissionWebhook",
            configuration: {
              apiVersion: "apiserver.config.k8s.io/v1",
              kind: "WebhookAdmissionConfiguration",
              kubeConfigFile: webhookKubeconfig,
            },
          },
        ]
      : []),
  ];
  return {
    [path.join(base, "config.json")]: `${JSON.stringify(
      { apiVersion: "apiserver.config.k8s.io/v1", kind: "AdmissionConfiguration", plugins },
      null,
      2,
    )}\n`,
    [path.join(dirs.validating, "ring0.json")]: manifestList(policies.validating),
    [path.join(dirs.mutating, "ring0.json")]: manifestList(policies.mutating),
  };
}

/** Write the admission configuration (only what changed) and return the kube-apiserver flags that load it. */
export function writeAdmission(dir: string, webhookKubeconfig?: string): Record<string, string> {
  const files = admissionFiles(dir, webhookKubeconfig);
  for (const [file, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
    if (readText(file) !== text) writeAtomically(file, text);
  }
  return {
    "admission-control-config-file": path.join(dir, "admission", "config.json"),
    "feature-gates": `${STATIC_ADMISSION_FEATURE_GATE}=true`,
  };
}
