/**
 * Ring0's users inside tenant control planes: who a user is there (what the gateway and the control
 * plane client impersonate), and the control plane client Ring0's pages and streams act through,
 * wired to the installed control plane directory. The client itself is server/k8s/control-plane-client.ts.
 */
import type { SessionUser } from "@/server/core/roles";
import {
  type ControlPlaneClient,
  createControlPlaneClient,
  watchTransportOf,
} from "@/server/k8s/control-plane-client";
import type { Impersonation } from "@/server/k8s/impersonation";
import type { WatchTransport } from "@/server/k8s/watch";
import { actsAsGrantee } from "@/server/sharing/access";
import { getControlPlaneDirectory } from "@/server/tenants/control-planes";
import { granteeIdentity, kubeGroupsFor, kubeUserName } from "@/server/tenants/kube-identity";

/** What the control plane needs to know of a Ring0 user to act as them. */
export type KubeActor = Pick<SessionUser, "subject" | "role" | "tenant">;

/**
 * Who `user` is inside `tenant`'s control plane: what the gateway impersonates for their token. A
 * user of another tenant (reaching it through a sharing grant, checked before this is asked) is
 * their grantee identity, which only the grant's RoleBindings name.
 */
export function impersonationOf(tenant: string, user: KubeActor): Impersonation {
  if (actsAsGrantee(user, tenant)) return granteeIdentity(user);
  return { user: kubeUserName(tenant, user.subject), groups: kubeGroupsFor(tenant, user.role) };
}

let shared: ControlPlaneClient<KubeActor> | undefined;

/**
 * The client of this module graph (one agent per tenant, shared by its requests). Deliberately not
 * on globalThis: the errors it throws must be this graph's K8sError and UnavailableError classes,
 * or the tRPC error mapping of another graph (route handlers vs. server components) would not
 * recognise them.
 */
export function controlPlaneClient(): ControlPlaneClient<KubeActor> {
  shared ??= createControlPlaneClient<KubeActor>({
    directory: getControlPlaneDirectory,
    actingAs: (tenant, user) => ({
      impersonate: impersonationOf(tenant, user),
      grantee: actsAsGrantee(user, tenant),
    }),
  });
  return shared;
}

/** List and watch in `tenant`'s control plane as `user` (server/k8s/watch.ts' list-watch loop). */
export function controlPlaneWatchTransport(
  tenant: string,
  user: KubeActor,
  client: ControlPlaneClient<KubeActor> = controlPlaneClient(),
): WatchTransport {
  return watchTransportOf(client, tenant, user);
}
