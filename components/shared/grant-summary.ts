/** How the grantee's pages word a grant: its expiry and what it lets them do in a namespace. */
import type { SharedGrantView, SharedNamespaceAccess } from "@/server/sharing/grantee-view";

/** `2026-11-22 17:00 UTC`: the same text on the server and in any browser (no hydration mismatch). */
export function expiryText(iso: string | null): string {
  if (!iso) return "Does not expire";
  return `Expires ${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`;
}

const pods = (names: string[] | null) => (names ? ` (pods ${names.join(", ")})` : "");

/** "list pods, read logs, open a shell (pods debug)" */
export function accessText(access: SharedNamespaceAccess): string {
  const parts = [
    access.canListPods ? "see its pods" : "",
    access.canReadLogs ? `read logs${pods(access.logsLimitedTo)}` : "",
    access.canExec ? `open a shell${pods(access.execLimitedTo)}` : "",
  ].filter(Boolean);
  return parts.length > 0 ? parts.join(", ") : "use kubectl only";
}

/** One rule as a sentence: `get, list, watch on pods, pods/log in shared`. */
export function ruleText(rule: SharedGrantView["rules"][number]): string {
  const groups = rule.apiGroups.filter((group) => group !== "");
  const resources = rule.resources.map((resource) =>
    groups.length > 0 ? `${resource} (${groups.join(", ")})` : resource,
  );
  const names = rule.resourceNames.length > 0 ? ` named ${rule.resourceNames.join(", ")}` : "";
  return `${rule.verbs.join(", ")} on ${resources.join(", ")}${names} in ${rule.namespaces.join(", ")}`;
}

export interface OwnerShares {
  owner: string;
  ownerDisplayName: string;
  grants: SharedGrantView[];
  /** Namespaces whose pods the portal can list, over all of the owner's grants. */
  workloadNamespaces: string[];
}

/** The grants by owner (one card each), in the order the server sent them. */
export function sharesByOwner(grants: readonly SharedGrantView[]): OwnerShares[] {
  const owners = new Map<string, OwnerShares>();
  for (const grant of grants) {
    const entry = owners.get(grant.owner) ?? {
      owner: grant.owner,
      ownerDisplayName: grant.ownerDisplayName,
      grants: [],
      workloadNamespaces: [],
    };
    entry.grants.push(grant);
    for (const access of grant.namespaces)
      if (access.canListPods && !entry.workloadNamespaces.includes(access.namespace))
        entry.workloadNamespaces.push(access.namespace);
    owners.set(grant.owner, entry);
  }
  for (const entry of owners.values()) entry.workloadNamespaces.sort();
  return [...owners.values()];
}
