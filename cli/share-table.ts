/**
 * Grants as `ring0 share list` prints them: grantees and rules spelled as the flags take them
 * (kubectl's resource.group for rules), and the columns of the owner's list and of
 * `--shared-with-me`.
 */
import type { Grantee, GrantRule, GrantState } from "@/server/sharing/types";
import { age, type Column } from "./output";

/** `globex`, `globex:alice,bob`, `globex@members`: as `--to` takes it. */
export function describeGrantee(grantee: Grantee): string {
  const users = grantee.users?.length ? `:${grantee.users.join(",")}` : "";
  const groups = grantee.groups?.length ? `@${grantee.groups.join(",")}` : "";
  return `${grantee.tenant}${users}${groups}`;
}

/** `get,list,watch pods,deployments.apps in shared`, kubectl's resource.group spelling. */
export function describeRule(rule: GrantRule): string {
  const resources = rule.apiGroups.flatMap((group) =>
    rule.resources.map((resource) => (group === "" ? resource : `${resource}.${group}`)),
  );
  const names = rule.resourceNames?.length ? ` named ${rule.resourceNames.join(",")}` : "";
  return `${rule.verbs.join(",")} ${resources.join(",")}${names} in ${rule.namespaces.join(",")}`;
}

type When = Date | string | null | undefined;

/** What a grant list shows of a grant (the router's summary has more; JSON output has it all). */
export interface GrantSummaryView {
  name: string;
  shortName: string;
  grantees: Grantee[];
  rules: GrantRule[];
  expiresAt: When;
  state: GrantState;
  lastUsedAt: When;
}

function lastUsed(at: When, now: Date): string {
  return at ? `${age(at, now)} ago` : "never";
}

export function grantColumns(now: Date): Column<GrantSummaryView>[] {
  return [
    { header: "NAME", value: (grant) => grant.shortName || grant.name },
    { header: "GRANTEES", value: (grant) => grant.grantees.map(describeGrantee).join(", ") },
    { header: "WHAT", value: (grant) => grant.rules.map(describeRule).join("; ") },
    { header: "EXPIRES", value: (grant) => (grant.expiresAt ? new Date(grant.expiresAt) : "never") },
    { header: "STATE", value: (grant) => grant.state },
    { header: "LAST USED", value: (grant) => lastUsed(grant.lastUsedAt, now) },
  ];
}

/** What `share list --shared-with-me` shows of a grant shared with the caller. */
export interface SharedGrantRow {
  owner: string;
  ownerDisplayName: string;
  shortName: string;
  purpose: string;
  expiresAt: When;
  rules: GrantRule[];
}

export function sharedWithMeColumns(): Column<SharedGrantRow>[] {
  return [
    {
      header: "OWNER",
      value: (grant) =>
        grant.ownerDisplayName && grant.ownerDisplayName !== grant.owner
          ? `${grant.ownerDisplayName} (${grant.owner})`
          : grant.owner,
    },
    { header: "GRANT", value: (grant) => grant.shortName },
    { header: "WHAT", value: (grant) => grant.rules.map(describeRule).join("; ") },
    { header: "EXPIRES", value: (grant) => (grant.expiresAt ? new Date(grant.expiresAt) : "never") },
    { header: "PURPOSE", value: (grant) => grant.purpose },
  ];
}
