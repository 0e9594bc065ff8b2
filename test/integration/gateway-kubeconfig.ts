/**
 * A kubeconfig file for kubectl through a test's kube gateway, rendered by Ring0's own renderer
 * (server/kubeconfigs/render.ts), as the portal and the CLI hand them out.
 */
import fs from "node:fs";
import { renderUserKubeconfig } from "@/server/kubeconfigs/render";

export function writeGatewayKubeconfig(
  file: string,
  input: { gatewayUrl: string; caPem: string; tenant: string; token: string; user?: string },
): string {
  fs.writeFileSync(
    file,
    renderUserKubeconfig({
      gatewayUrl: input.gatewayUrl,
      caPem: input.caPem,
      tenant: input.tenant,
      token: input.token,
      user: input.user ?? "test",
    }),
    { mode: 0o600 },
  );
  return file;
}
