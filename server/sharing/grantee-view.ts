/**
 * What a grantee sees of the grants shared with them (pure): the owner's display name, the grant's
 * purpose, expiry and rules, and what the rules enable in the portal per namespace. Nothing else of
 * the owner (endpoint, admins, quota, status) and nothing of the other grantees reaches them.
 */
import { podAttributes } from "@/server/sharing/access";
import { expiryOf, ruleCovers, sharedNamespaces } from "@/server/sharing/grants";
import type { RequestAttributes } from "@/server/sharing/request-info";
import type { GrantRule, SharingPolicyResource } from "@/server/sharing/types";

export interface SharedRuleView {
  namespaces: string[];
  apiGroups: string[];
  resources: string[];
  /** Empty: every object of those resources. */
  resourceNames: string[];
  verbs: string[];
}

/** What the portal can do in one shared namespace. */
export interface SharedNamespaceAccess {
  namespace: string;
  /** The Workloads view: list and watch pods. */
  canListPods: boolean;
  canReadLogs: boolean;
  canExec: boolean;
  /** The pods whose logs may be read when the grant names some; null: every pod (or none allowed). */
  logsLimitedTo: string[] | null;
  /** The pods a shell may be opened in when the grant names some; null: every pod (or none allowed). */
  execLimitedTo: string[] | null;
}

export interface SharedGrantView {
  owner: string;
  ownerDisplayName: string;
  /** The SharingPolicy's name. */
  name: string;
  /** The name without its owner's prefix, as the owner calls the grant. */
  shortName: string;
  purpose: string;
  expiresAt: string | null;
  rules: SharedRuleView[];
  namespaces: SharedNamespaceAccess[];
}

type PodAttributes = Extract<RequestAttributes, { kind: "resource" }>;

/** Whether a rule covers the request for some pod: any pod, or one of the pods it names. */
function coversSomePod(rule: GrantRule, request: PodAttributes): boolean {
  const names = rule.resourceNames ?? [];
  if (names.length === 0) return ruleCovers(rule, request);
  return names.some((name) => ruleCovers(rule, { ...request, name }));
}

/** The pods the covering rules name, or null when one of them covers every pod. */
function podsNamed(rules: readonly GrantRule[], request: PodAttributes): string[] | null {
  const covering = rules.filter((rule) => coversSomePod(rule, request));
  if (covering.some((rule) => (rule.resourceNames ?? []).length === 0)) return null;
  return [...new Set(covering.flatMap((rule) => rule.resourceNames ?? []))].sort();
}

/** What `grants` (live, of one owner, for one user) let the portal do in `namespace`. */
export function namespaceAccess(
  grants: readonly SharingPolicyResource[],
  namespace: string,
): SharedNamespaceAccess {
  const rules = grants.flatMap((grant) => grant.spec.rules);
  const covered = (request: PodAttributes) => rules.some((rule) => coversSomePod(rule, request));
  const list = podAttributes("list", namespace);
  const logs = podAttributes("get", namespace, "", "log");
  const exec = podAttributes("create", namespace, "", "exec");
  const canReadLogs = covered(logs);
  const canExec = covered(exec);
  return {
    namespace,
    canListPods: covered(list) && covered(podAttributes("watch", namespace)),
    canReadLogs,
    canExec,
    logsLimitedTo: canReadLogs ? podsNamed(rules, logs) : null,
    execLimitedTo: canExec ? podsNamed(rules, exec) : null,
  };
}

/** Whether `grants` allow a shell in `pod` (create pods/exec on it). */
export function canExecInPod(
  grants: readonly SharingPolicyResource[],
  namespace: string,
  pod: string,
): boolean {
  const request = podAttributes("create", namespace, pod, "exec");
  return grants.some((grant) => grant.spec.rules.some((rule) => ruleCovers(rule, request)));
}

/** Whether `grants` reach `namespace` at all (a rule names it). */
export function coversNamespace(grants: readonly SharingPolicyResource[], namespace: string): boolean {
  return sharedNamespaces(grants).includes(namespace);
}

/** `acme-oncall` of owner `acme` is `oncall`; a name without the owner's prefix stays as it is. */
export function grantShortName(grant: SharingPolicyResource): string {
  const { name } = grant.metadata;
  for (const separator of ["-", "."]) {
    const prefix = `${grant.spec.ownerTenant}${separator}`;
    if (name.startsWith(prefix) && name.length > prefix.length) return name.slice(prefix.length);
  }
  return name;
}

/** One grant as its grantee sees it. */
export function sharedGrantView(grant: SharingPolicyResource, ownerDisplayName: string): SharedGrantView {
  return {
    owner: grant.spec.ownerTenant,
    ownerDisplayName,
    name: grant.metadata.name,
    shortName: grantShortName(grant),
    purpose: grant.spec.purpose,
    expiresAt: expiryOf(grant)?.toISOString() ?? null,
    rules: grant.spec.rules.map((rule) => ({
      namespaces: [...rule.namespaces],
      apiGroups: [...rule.apiGroups],
      resources: [...rule.resources],
      resourceNames: [...(rule.resourceNames ?? [])],
      verbs: [...rule.verbs],
    })),
    namespaces: sharedNamespaces([grant]).map((namespace) => namespaceAccess([grant], namespace)),
  };
}
