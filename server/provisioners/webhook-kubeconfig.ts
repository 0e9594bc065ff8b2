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
