/**
 * The namespaced resources a cluster serves, from its discovery: `/api/v1` and each API group's
 * preferred version. RBAC matches groups and resources, not versions, so one version per group is
 * enough. A group whose discovery fails (an aggregated API that is down) is left out and named.
 */

import type { ClusterConnection } from "./cluster";
import { groupVersionPath } from "./kinds/group-version";
import { kubeRequest } from "./transport";

export interface NamespacedResource {
  /** "" for the core group. */
  apiGroup: string;
  /** `pods`, or `pods/log` for a subresource. */
  resource: string;
}

interface ResourceList {
  resources?: Array<{ name?: string; namespaced?: boolean }>;
}

interface GroupList {
  groups?: Array<{ name?: string; preferredVersion?: { groupVersion?: string } }>;
}

/** A resource name as the API server validates it, optionally with one subresource: `pods/log`. */
const resourceName = /^[a-z0-9]([a-z0-9.-]*[a-z0-9])?(\/[a-z0-9]([a-z0-9-]*[a-z0-9])?)?$/;
const groupVersionPattern = /^([a-z0-9][a-z0-9.-]*)\/[a-z0-9]+$/;

/** The namespaced resources of a list; names that are no resource name (`*`) are dropped. */
function namespacedIn(list: ResourceList, apiGroup: string): NamespacedResource[] {
  return (list.resources ?? [])
    .filter(
      (resource) =>
        resource.namespaced === true && typeof resource.name === "string" && resourceName.test(resource.name),
    )
    .map((resource) => ({ apiGroup, resource: resource.name as string }));
}

export async function namespacedResources(
  conn: ClusterConnection,
  options: { timeoutMs?: number } = {},
): Promise<{ resources: NamespacedResource[]; unavailable: string[] }> {
  const timeoutMs = options.timeoutMs ?? 15_000;
  const [core, groups] = await Promise.all([
    kubeRequest<ResourceList>(conn, { path: "/api/v1", timeoutMs }),
    kubeRequest<GroupList>(conn, { path: "/apis", timeoutMs }),
  ]);
  const resources = namespacedIn(core, "");
  const unavailable: string[] = [];
  const lists = await Promise.all(
    (groups.groups ?? []).map(async (group) => {
      const groupVersion = group.preferredVersion?.groupVersion;
      // An aggregated API server answers for its group alone: the version must be of that group.
      if (!group.name || groupVersion?.match(groupVersionPattern)?.[1] !== group.name) return [];
      try {
        return namespacedIn(
          await kubeRequest<ResourceList>(conn, { path: groupVersionPath(groupVersion), timeoutMs }),
          group.name,
        );
      } catch {
        unavailable.push(group.name);
        return [];
      }
    }),
  );
  for (const list of lists) resources.push(...list);
  return { resources, unavailable: unavailable.sort() };
}
