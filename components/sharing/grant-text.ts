/**
 * Grants in words, for tables and forms: "get, list, watch pods, pods/log in shared". Pure, so the
 * owner's, the operator's and the grantee's views say the same thing the same way.
 */
import type { BadgeTone } from "@/components/ui/status-badge";

export interface RuleLike {
  namespaces: string[];
  apiGroups: string[];
  resources: string[];
  resourceNames?: string[] | undefined;
  verbs: string[];
}

export interface GranteeLike {
  tenant: string;
  users?: string[] | undefined;
  groups?: string[] | undefined;
}

/** One rule: verbs, resources (with their API group unless core), names if any, namespaces. */
export function ruleText(rule: RuleLike): string {
  const groups = rule.apiGroups.filter((group) => group !== "");
  const resources = rule.resources
    .map((resource) => (groups.length === 1 ? `${resource}.${groups[0]}` : resource))
    .join(", ");
  const also = groups.length > 1 ? ` (API groups ${rule.apiGroups.map((g) => g || "core").join(", ")})` : "";
  const names = rule.resourceNames?.length ? ` named ${rule.resourceNames.join(", ")}` : "";
  const where = `${rule.namespaces.length === 1 ? "" : "namespaces "}${rule.namespaces.join(", ")}`;
  return `${rule.verbs.join(", ")} ${resources}${also}${names} in ${where}`;
}

export function rulesText(rules: readonly RuleLike[]): string {
  return rules.map(ruleText).join("; ");
}

/** "globex (all members)", "globex: users ann, bob; groups viewers". */
export function granteeText(grantee: GranteeLike): string {
  const parts = [
    grantee.users?.length ? `users ${grantee.users.join(", ")}` : "",
    grantee.groups?.length ? `groups ${grantee.groups.join(", ")}` : "",
  ].filter(Boolean);
  return parts.length ? `${grantee.tenant}: ${parts.join("; ")}` : `${grantee.tenant} (everyone)`;
}

export function granteesText(grantees: readonly GranteeLike[]): string {
  return grantees.map(granteeText).join(", ");
}

export function stateTone(state: string): BadgeTone {
  if (state === "Active") return "success";
  if (state === "PendingApproval") return "warning";
  if (state === "Revoked") return "failure";
  return "muted";
}

export const stateLabel: Record<string, string> = {
  Active: "Active",
  PendingApproval: "Pending approval",
  Expired: "Expired",
  Revoked: "Revoked",
};

/** A comma- or space-separated list as typed into a field. */
export function splitList(text: string): string[] {
  return text
    .split(/[\s,]+/)
    .map((item) => item.trim())
    .filter(Boolean);
}

/**
 * What the resource presets fill in (the owner can still edit every field after). A preset may be
 * several rules: RBAC grants every listed verb on every listed resource, so exec's `create` must
 * not sit in the same rule as `pods`, or it would let grantees create pods.
 */
export const rulePresets = [
  {
    id: "read-pods",
    label: "Read pods",
    rules: [{ apiGroups: [""], resources: ["pods"], verbs: ["get", "list", "watch"] }],
  },
  {
    id: "read-logs",
    label: "Read pod logs",
    rules: [
      { apiGroups: [""], resources: ["pods"], verbs: ["get", "list", "watch"] },
      { apiGroups: [""], resources: ["pods/log"], verbs: ["get"] },
    ],
  },
  {
    id: "exec",
    label: "Exec into pods",
    rules: [
      { apiGroups: [""], resources: ["pods"], verbs: ["get", "list", "watch"] },
      { apiGroups: [""], resources: ["pods/exec"], verbs: ["get", "create"] },
    ],
  },
] as const;

/** `datetime-local` input value (local time, minutes) ↔ ISO 8601. */
export function toLocalInput(iso: string | null): string {
  if (!iso) return "";
  const date = new Date(iso);
  const local = new Date(date.getTime() - date.getTimezoneOffset() * 60_000);
  return local.toISOString().slice(0, 16);
}

export function fromLocalInput(value: string): string | undefined {
  if (!value) return undefined;
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? undefined : date.toISOString();
}
