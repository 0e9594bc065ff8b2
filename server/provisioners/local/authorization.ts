/**
 * A tenant API server's authorization chain: Node, RBAC, then Ring0's authorization webhook
 * (server/admission/authorizer.ts), which the API server asks only about requests RBAC refused and
 * which only ever allows tenant admins in the groups of their own CRDs and APIServices (RBAC gets
 * the same rights with the next reconcile). It dials Ring0's webhook server on 127.0.0.1 with the
 * tenant API server's client certificate (./kubelet-client.ts), verifying it by the vn-agent CA.
 */
import path from "node:path";
import { AUTHORIZE_PATH } from "@/server/admission/authorizer";
import type { WebhookEndpoint } from "@/server/admission/registration";
import { authorizationWebhookKubeconfig } from "../webhook-kubeconfig";
import { vnAgentKubeletArgs } from "./kubelet-client";
import { readText, writeAtomically } from "./paths";

/** The webhook's kubeconfig (pure: unit-tested). */
export function authorizationKubeconfig(dir: string, endpoint: WebhookEndpoint): string {
  const tls = vnAgentKubeletArgs(dir);
  return authorizationWebhookKubeconfig({
    server: `${endpoint.baseUrl}${AUTHORIZE_PATH}`,
    ca: tls["kubelet-certificate-authority"],
    cert: tls["kubelet-client-certificate"],
    key: tls["kubelet-client-key"],
  });
}

/**
 * Write the webhook's kubeconfig and return the kube-apiserver flags of the chain. Its file is named
 * by the webhook port, so a new port changes the flags and the control plane restarts with it.
 */
export function writeAuthorization(dir: string, endpoint: WebhookEndpoint): Record<string, string> {
  const port = new URL(endpoint.baseUrl).port;
  const file = path.join(dir, "vn-agent", `authorization-webhook-${port}.kubeconfig`);
  const text = authorizationKubeconfig(dir, endpoint);
  if (readText(file) !== text) writeAtomically(file, text);
  return {
    "authorization-mode": "Node,RBAC,Webhook",
    "authorization-webhook-config-file": file,
    "authorization-webhook-version": "v1",
    // A refusal is cached briefly, so a new admin's rights are not held back for long.
    "authorization-webhook-cache-authorized-ttl": "1m",
    "authorization-webhook-cache-unauthorized-ttl": "10s",
  };
}
