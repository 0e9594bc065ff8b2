/**
 * The Secrets of a tenant's control plane: its PKI (plain PEM files by key) and the kubeconfigs of
 * the controller manager and Ring0's admin, plus the PKI checksum whose change rolls the pods onto
 * new certificates.
 */
import { createHash } from "node:crypto";
import type { KubeObject } from "@/server/k8s/apply";
import type { ControlPlanePki } from "../pki";
import { authorizationWebhookKubeconfig, webhookClientKubeconfig } from "../webhook-kubeconfig";
import {
  controlPlaneNamespace,
  KUBECONFIG_SECRET,
  KUBELET_CLIENT_SECRET,
  labels,
  PKI_SECRET,
} from "./naming";

/** The files of KUBELET_CLIENT_SECRET, as the API server mounts them. */
export const kubeletClientFiles = {
  cert: "kubelet-client.crt",
  key: "kubelet-client.key",
  ca: "vn-agent-ca.crt",
  webhookKubeconfig: "webhook.kubeconfig",
  /** Ring0's authorization webhook: its URL, the CA above, the client certificate above. */
  authorizationKubeconfig: "authorization.kubeconfig",
} as const;

/**
 * The kubeconfig of the API server's authorization webhook (Ring0's, at `url`): verified by the
 * vn-agent serving CA, called with the API server's client certificate (pure: unit-tested).
 */
export function authorizationKubeconfig(url: string): string {
  const file = (name: string) => `${KUBELET_CLIENT_MOUNT}/${name}`;
  return authorizationWebhookKubeconfig({
    server: url,
    ca: file(kubeletClientFiles.ca),
    cert: file(kubeletClientFiles.cert),
    key: file(kubeletClientFiles.key),
  });
}

/** Where the API server mounts KUBELET_CLIENT_SECRET. */
export const KUBELET_CLIENT_MOUNT = "/etc/kubernetes/kubelet-client";

export function kubeletClientSecretManifest(
  tenant: string,
  files: { cert: string; key: string; ca: string; authorization?: string },
): KubeObject {
  return {
    apiVersion: "v1",
    kind: "Secret",
    metadata: {
      name: KUBELET_CLIENT_SECRET,
      namespace: controlPlaneNamespace(tenant),
      labels: labels(tenant),
    },
    type: "Opaque",
    data: {
      [kubeletClientFiles.cert]: base64(files.cert),
      [kubeletClientFiles.key]: base64(files.key),
      [kubeletClientFiles.ca]: base64(files.ca),
      [kubeletClientFiles.webhookKubeconfig]: base64(
        webhookClientKubeconfig({
          cert: `${KUBELET_CLIENT_MOUNT}/${kubeletClientFiles.cert}`,
          key: `${KUBELET_CLIENT_MOUNT}/${kubeletClientFiles.key}`,
        }),
      ),
      ...(files.authorization
        ? { [kubeletClientFiles.authorizationKubeconfig]: base64(files.authorization) }
        : {}),
    },
  };
}

function base64(text: string): string {
  return Buffer.from(text).toString("base64");
}

export function pkiSecretManifest(tenant: string, files: Record<string, string>): KubeObject {
  return {
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name: PKI_SECRET, namespace: controlPlaneNamespace(tenant), labels: labels(tenant) },
    type: "Opaque",
    data: Object.fromEntries(Object.entries(files).map(([file, pem]) => [file, base64(pem)])),
  };
}

/** A kubeconfig with one cluster, one client-certificate user and one context. */
export function renderKubeconfig(input: {
  cluster: string;
  user: string;
  server: string;
  ca: string;
  cert: string;
  key: string;
}): string {
  return [
    "apiVersion: v1",
    "kind: Config",
    "clusters:",
    `- name: ${input.cluster}`,
    "  cluster:",
    `    server: ${input.server}`,
    `    certificate-authority-data: ${base64(input.ca)}`,
    "users:",
    `- name: ${input.user}`,
    "  user:",
    `    client-certificate-data: ${base64(input.cert)}`,
    `    client-key-data: ${base64(input.key)}`,
    "contexts:",
    `- name: ${input.user}@${input.cluster}`,
    "  context:",
    `    cluster: ${input.cluster}`,
    `    user: ${input.user}`,
    `current-context: ${input.user}@${input.cluster}`,
    "",
  ].join("\n");
}

/** The controller manager's kubeconfig and Ring0's admin kubeconfig, both at `server` (the API server's cluster IP). */
export function kubeconfigSecretManifest(tenant: string, pki: ControlPlanePki, server: string): KubeObject {
  const controllerManager = renderKubeconfig({
    cluster: tenant,
    user: "system:kube-controller-manager",
    server,
    ca: pki.ca.cert,
    ...pki.controllerManager,
  });
  const admin = renderKubeconfig({
    cluster: tenant,
    user: "ring0-admin",
    server,
    ca: pki.ca.cert,
    ...pki.admin,
  });
  return {
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name: KUBECONFIG_SECRET, namespace: controlPlaneNamespace(tenant), labels: labels(tenant) },
    type: "Opaque",
    data: { "controller-manager.conf": base64(controllerManager), "admin.conf": base64(admin) },
  };
}

/** A checksum of the PKI files, for the pod template annotation that rolls pods onto new certificates. */
export function pkiChecksum(files: Record<string, string>): string {
  const hash = createHash("sha256");
  for (const file of Object.keys(files).sort())
    hash
      .update(file)
      .update("\0")
      .update(files[file] ?? "");
  return hash.digest("hex").slice(0, 16);
}
