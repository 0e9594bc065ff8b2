/**
 * The kubeconfig a tenant API server's webhook admission plugin loads: every webhook ("*": Ring0's
 * webhook address is chosen when Ring0 starts) gets the API server's client certificate, which
 * Ring0's quota webhook verifies and takes the tenant from. Shared by the local provisioner (files
 * in the tenant's dir) and the kubernetes provisioner (files in a mounted Secret).
 */
export function webhookClientKubeconfig(files: { cert: string; key: string }): string {
  return [
    "apiVersion: v1",
    "kind: Config",
    "users:",
    '  - name: "*"',
    "    user:",
    `      client-certificate: ${JSON.stringify(files.cert)}`,
    `      client-key: ${JSON.stringify(files.key)}`,
    "",
  ].join("\n");
}

/**
 * The kubeconfig of a tenant API server's authorization webhook: Ring0's at `server`, verified by
 * the CA file `ca`, called with the API server's client certificate files. Shared by the local
 * provisioner (files in the tenant's dir) and the kubernetes provisioner (a mounted Secret).
 */
export function authorizationWebhookKubeconfig(files: {
  server: string;
  ca: string;
  cert: string;
  key: string;
}): string {
  return `${JSON.stringify(
    {
      apiVersion: "v1",
      kind: "Config",
      clusters: [{ name: "ring0", cluster: { server: files.server, "certificate-authority": files.ca } }],
      users: [
        { name: "tenant-apiserver", user: { "client-certificate": files.cert, "client-key": files.key } },
      ],
      contexts: [{ name: "ring0", context: { cluster: "ring0", user: "tenant-apiserver" } }],
      "current-context": "ring0",
    },
    null,
    2,
  )}\n`;
}
