/**
 * What every tenant control plane starts with (seed 004, "tenant defaults"), applied by the tenant
 * reconciler with the control plane's admin identity and re-applied on every reconcile (drift is
 * repaired):
 *
 * - the standard namespaces (default, kube-system, kube-public);
 * - RBAC bound to the groups the kube gateway impersonates (server/tenants/kube-identity.ts):
 *   admins → `ring0:tenant-admin`, members → `edit`, viewers → `view`. A role change in Ring0
 *   therefore applies on the user's next request, without touching these objects;
 * - `ring0:tenant-admin` grants everything a tenant runs its apps with, and never what would let it
 *   break out of its tenancy: no writes to nodes, persistent volumes, storage/priority/runtime
 *   classes or certificate signing (API priority and fairness is theirs, with Ring0's requests kept
 *   exempt by ../provisioners/admission-policies.ts). Verbs are always named (never "*",
 *   which would include RBAC's bind and escalate), so RBAC's escalation check stops admins from
 *   binding or creating roles beyond their own rights;
 * - webhooks, admission policies and aggregated APIs, as a cluster admin has them (issues 17, 23):
 *   what webhooks and APIServices call is dialled only through the control plane's egress wall
 *   (server/provisioners/local/egress.ts), which lets through nothing but the tenant's own pods.
 *   Ring0's own admission policies are not API objects at all: the API server loads them from files
 *   (server/provisioners/admission-policies.ts). They keep Ring0's objects (labelled
 *   `ring0.dev/protected`) out of tenant hands, APIServices to the tenant's own groups, and every
 *   tenant webhook and policy off Ring0's own requests.
 */
import { deleteObject, type KubeObject, serverSideApply } from "@/server/k8s/apply";
import type { ClusterConnection } from "@/server/k8s/cluster";
import { CustomResourceDefinitionKind } from "@/server/k8s/kinds/cluster-kinds";
import { ClusterRoleBindingKind, ClusterRoleKind } from "@/server/k8s/kinds/rbac";
import { kubeRequest, kubeRequestText } from "@/server/k8s/transport";
import {
  builtInGroups,
  legacyApiPolicies,
  managedLabels,
  notRing0ConditionName,
  protectedLabel,
} from "@/server/provisioners/admission-policies";
import { kubeUserName, roleGroup } from "./kube-identity";

export const tenantAdminClusterRole = "ring0:tenant-admin";
export { managedLabels, protectedLabel };

const allVerbs = ["get", "list", "watch", "create", "update", "patch", "delete", "deletecollection"];
const readVerbs = ["get", "list", "watch"];

/** Core ("") resources tenant admins manage; cluster-scoped ones other than namespaces are read-only. */
const coreResources = [
  "namespaces",
  "pods",
  "pods/log",
  // Through the egress wall, to the tenant's own pods only (server/provisioners/local/egress-policy.ts).
  "pods/proxy",
  "pods/exec",
  "pods/attach",
  "pods/portforward",
  "pods/eviction",
  "pods/ephemeralcontainers",
  "pods/status",
  // In-place resize (the quota webhook checks resizes as it checks creates).
  "pods/resize",
  "services",
  "services/proxy",
  "endpoints",
  "configmaps",
  "secrets",
  "serviceaccounts",
  "serviceaccounts/token",
  "persistentvolumeclaims",
  "replicationcontrollers",
  "replicationcontrollers/scale",
  // Status and finalizers of the tenant's own objects, as a cluster admin writes them (the syncer
  // brings the super cluster's status up again for what runs there).
  "replicationcontrollers/status",
  "services/status",
  "namespaces/status",
  "namespaces/finalize",
  "persistentvolumeclaims/status",
  "resourcequotas",
  // A namespace quota's status is the tenant's own bookkeeping (Ring0's tenant quota keeps its own).
  "resourcequotas/status",
  "limitranges",
  "events",
  "podtemplates",
  "bindings",
];

/** API groups tenant admins have full rights in (their own workloads, CRDs and RBAC). */
export const tenantAdminGroups = [
  "apps",
  "batch",
  "autoscaling",
  "policy",
  "networking.k8s.io",
  "discovery.k8s.io",
  "coordination.k8s.io",
  "events.k8s.io",
  "apiextensions.k8s.io",
  "rbac.authorization.k8s.io",
  // Dynamic resource allocation: device classes, slices and claims are the tenant's own and inert
  // below it (the syncer carries no claim to the super cluster: super-pod-spec.ts).
  "resource.k8s.io",
];

/**
 * Built-in groups whose objects configure only the tenant's own control plane: nothing in them is
 * synced to the super cluster, so tenant admins write them as cluster admins do.
 */
export const tenantInertGroups = ["storage.k8s.io", "scheduling.k8s.io", "node.k8s.io"];

/** Groups that extend the control plane, which tenant admins configure as cluster admins do. */
export const tenantExtensionGroups = ["admissionregistration.k8s.io", "apiregistration.k8s.io"];

/** Groups no tenant CRD may take: they configure the control plane itself or the shared data plane. */
export const reservedGroups = [
  "",
  ...tenantExtensionGroups,
  "certificates.k8s.io",
  "flowcontrol.apiserver.k8s.io",
  "internal.apiserver.k8s.io",
  "node.k8s.io",
  "scheduling.k8s.io",
  "storage.k8s.io",
  "storagemigration.k8s.io",
  "authentication.k8s.io",
  "authorization.k8s.io",
  "metrics.k8s.io",
  "ring0.dev",
  ...tenantAdminGroups,
];

/**
 * Whether tenant admins have every named verb in an API group as the group of their own CRDs or
 * APIServices: any group but those the control plane or Ring0 serves or reserves.
 */
export function isCustomGroup(group: string): boolean {
  return (
    group !== "" &&
    !reservedGroups.includes(group) &&
    !builtInGroups.includes(group) &&
    ![".k8s.io", ".kubernetes.io", ".ring0.dev"].some((suffix) => group.endsWith(suffix))
  );
}

/** The verbs tenant admins have on what they manage (named: never "*", bind, escalate or impersonate). */
export const tenantAdminVerbs: readonly string[] = allVerbs;

export interface TenantDefaultsInput {
  tenant: string;
  /** Tenant.spec.admins: IAM user names bound to the admin role in addition to the admins group. */
  admins: string[];
  /** API groups of the tenant's own CustomResourceDefinitions (full rights for admins). */
  customGroups: string[];
}

function clusterRoleBinding(name: string, role: string, subjects: object[]): KubeObject {
  return {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "ClusterRoleBinding",
    metadata: { name, labels: managedLabels },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: role },
    subjects,
  };
}

const group = (name: string) => ({ apiGroup: "rbac.authorization.k8s.io", kind: "Group", name });
const user = (name: string) => ({ apiGroup: "rbac.authorization.k8s.io", kind: "User", name });

/** The objects, in apply order (pure: unit-tested). */
export function tenantDefaultManifests(input: TenantDefaultsInput): KubeObject[] {
  const { tenant } = input;
  const customGroups = [...new Set(input.customGroups)].filter(isCustomGroup).sort();
  const namespaces = ["default", "kube-system", "kube-public"].map(
    (name): KubeObject => ({ apiVersion: "v1", kind: "Namespace", metadata: { name } }),
  );
  const adminRole: KubeObject = {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "ClusterRole",
    metadata: {
      name: tenantAdminClusterRole,
      labels: managedLabels,
      annotations: {
        "ring0.dev/description":
          "Ring0 tenant admins: everything for the tenant's workloads, CRDs and RBAC; nothing that configures the control plane or the shared nodes.",
      },
    },
    rules: [
      { apiGroups: [""], resources: coreResources, verbs: allVerbs },
      // Proxying to their pods and Services with any HTTP method: an OPTIONS request has no verb
      // (""), which only "*" names; on these subresources "*" grants nothing else.
      { apiGroups: [""], resources: ["pods/proxy", "services/proxy"], verbs: ["*"] },
      { apiGroups: [""], resources: ["nodes", "componentstatuses"], verbs: readVerbs },
      // Persistent volumes are the tenant's own objects too and, like storage classes, inert: none
      // is synced below (the super cluster's volumes are never the tenant's to name).
      { apiGroups: [""], resources: ["persistentvolumes", "persistentvolumes/status"], verbs: allVerbs },
      // Named verbs, never "*": that would include RBAC's bind and escalate (and so cluster-admin).
      { apiGroups: tenantAdminGroups, resources: ["*"], verbs: allVerbs },
      // Webhooks, admission policies and APIServices, as a cluster admin has them: their calls
      // pass the egress wall, and Ring0's policies from files keep them off Ring0's own requests.
      { apiGroups: tenantExtensionGroups, resources: ["*"], verbs: allVerbs },
      // API priority and fairness: Ring0's requests stay exempt (admission-policies.ts).
      { apiGroups: ["flowcontrol.apiserver.k8s.io"], resources: ["*"], verbs: allVerbs },
      ...(customGroups.length > 0 ? [{ apiGroups: customGroups, resources: ["*"], verbs: allVerbs }] : []),
      // Storage classes and CSI objects, priority classes and runtime classes are the tenant's
      // own and mean nothing below: no such object is synced, and a pod goes below without its
      // priority, runtime class and overhead (super-pod-spec.ts).
      { apiGroups: tenantInertGroups, resources: ["*"], verbs: allVerbs },
      // Asking what a user may do, or who a token is, in the tenant's own control plane.
      {
        apiGroups: ["authorization.k8s.io"],
        resources: ["subjectaccessreviews", "localsubjectaccessreviews"],
        verbs: ["create"],
      },
      { apiGroups: ["authentication.k8s.io"], resources: ["tokenreviews"], verbs: ["create"] },
      { apiGroups: ["metrics.k8s.io"], resources: ["*"], verbs: readVerbs },
    ],
  };
  const admins = clusterRoleBinding("ring0:tenant-admins", tenantAdminClusterRole, [
    group(roleGroup(tenant, "admin")),
    ...[...new Set(input.admins)].sort().map((name) => user(kubeUserName(tenant, name))),
  ]);
  const members = clusterRoleBinding("ring0:tenant-members", "edit", [group(roleGroup(tenant, "member"))]);
  const viewers = clusterRoleBinding("ring0:tenant-viewers", "view", [group(roleGroup(tenant, "viewer"))]);

  return [...namespaces, adminRole, admins, members, viewers];
}

/** Groups of the CustomResourceDefinitions and the tenant's own APIServices in its control plane. */
async function customResourceGroups(conn: ClusterConnection, signal?: AbortSignal): Promise<string[]> {
  const crds = await CustomResourceDefinitionKind.list(conn, { timeoutMs: 15_000, signal });
  // And the groups of the tenant's own aggregated APIs (APIServices backed by a Service).
  const apiServices = await kubeRequest<{ items?: { spec?: { group?: string; service?: unknown } }[] }>(
    conn,
    {
      path: "/apis/apiregistration.k8s.io/v1/apiservices",
      timeoutMs: 15_000,
      signal,
    },
  );
  return [
    ...crds.map((crd) => crd.spec?.group ?? ""),
    ...(apiServices.items ?? []).filter((item) => item.spec?.service).map((item) => item.spec?.group ?? ""),
  ].filter(Boolean);
}

/**
 * The built-in roles members and viewers are bound to get their rules from the control plane's
 * clusterrole-aggregation controller, a few seconds after a new control plane starts. Until then
 * the bindings would grant nothing: report what is still missing.
 */
async function unaggregatedRoles(conn: ClusterConnection, signal?: AbortSignal): Promise<string[]> {
  const missing: string[] = [];
  for (const role of ["edit", "view"]) {
    const found = await kubeRequest<{ rules?: unknown[] | null }>(conn, {
      path: ClusterRoleKind.path({ name: role }),
      timeoutMs: 15_000,
      signal,
    });
    if (!found.rules || found.rules.length === 0) missing.push(role);
  }
  return missing;
}

/**
 * Apply every default (server-side apply, forced: Ring0 owns these fields). Idempotent. Resolves
 * with what is still pending (the bindings are in place but would not grant their rights yet), or
 * undefined when the defaults are fully effective.
 */
export async function applyTenantDefaults(
  conn: ClusterConnection,
  input: { tenant: string; admins: string[] },
  signal?: AbortSignal,
): Promise<string | undefined> {
  const customGroups = await customResourceGroups(conn, signal);
  for (const manifest of tenantDefaultManifests({ ...input, customGroups })) {
    signal?.throwIfAborted();
    await serverSideApply(conn, manifest, { force: true });
  }
  await removeLegacyPolicies(conn, signal);
  const missing = await unaggregatedRoles(conn, signal);
  if (missing.length > 0) {
    return `Waiting for the control plane to aggregate the built-in ${missing.join(" and ")} roles members and viewers are bound to.`;
  }
  if (!(await protectionEnforced(conn, input.tenant, signal))) {
    return "Waiting for the control plane to enforce the policies protecting Ring0's objects and requests (they take effect a few seconds after they are created).";
  }
  return undefined;
}

/**
 * Control planes made before Ring0's policies moved into files still hold them as API objects
 * (labelled as Ring0's, so tenant admins cannot remove them): delete them, the files hold the same
 * rules. One list per reconcile finds whether any is left.
 */
async function removeLegacyPolicies(conn: ClusterConnection, signal?: AbortSignal): Promise<void> {
  const left = await kubeRequest<{ items?: unknown[] }>(conn, {
    path: "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies",
    query: { labelSelector: `${protectedLabel}=true`, limit: "1" },
    timeoutMs: 15_000,
    signal,
  });
  if ((left.items ?? []).length === 0) return;
  for (const { kind, names } of legacyApiPolicies) {
    for (const name of names) {
      await deleteObject(conn, { apiVersion: "admissionregistration.k8s.io/v1", kind, metadata: { name } });
    }
  }
}

const probeAsTenantAdmin = (tenant: string) => ({
  "Impersonate-User": kubeUserName(tenant, "ring0:protection-probe"),
  "Impersonate-Group": roleGroup(tenant, "admin"),
});

/**
 * Whether Ring0's policies are in force, asked as a tenant admin with dry runs (they pass through
 * admission and change nothing): deleting the admins' binding is refused as Ring0's, and a webhook
 * configuration and an admission policy come back carrying Ring0's condition. The API server loads
 * the policies from files as it starts; a control plane started without them never reports Ready.
 */
async function protectionEnforced(
  conn: ClusterConnection,
  tenant: string,
  signal?: AbortSignal,
): Promise<boolean> {
  const headers = probeAsTenantAdmin(tenant);
  const probe = await kubeRequestText(conn, {
    method: "DELETE",
    path: ClusterRoleBindingKind.path({ name: "ring0:tenant-admins" }),
    query: { dryRun: "All" },
    headers,
    signal,
    timeoutMs: 15_000,
  });
  if (probe.status !== 403 || !probe.text.includes("managed by Ring0")) return false;
  const created = (resource: string, body: object) =>
    kubeRequestText(conn, {
      method: "POST",
      path: `/apis/admissionregistration.k8s.io/v1/${resource}`,
      query: { dryRun: "All" },
      headers,
      body,
      signal,
      timeoutMs: 15_000,
    });
  const webhook = await created("validatingwebhookconfigurations", {
    apiVersion: "admissionregistration.k8s.io/v1",
    kind: "ValidatingWebhookConfiguration",
    metadata: { name: "ring0-protection-probe" },
    webhooks: [
      {
        name: "probe.ring0.dev",
        clientConfig: { url: "https://127.0.0.1:1/" },
        sideEffects: "None",
        admissionReviewVersions: ["v1"],
      },
    ],
  });
  if (webhook.status !== 201 || !webhook.text.includes(notRing0ConditionName)) return false;
  const policy = await created("validatingadmissionpolicies", {
    apiVersion: "admissionregistration.k8s.io/v1",
    kind: "ValidatingAdmissionPolicy",
    metadata: { name: "ring0-protection-probe" },
    spec: {
      matchConstraints: {
        resourceRules: [
          { apiGroups: [""], apiVersions: ["v1"], resources: ["configmaps"], operations: ["CREATE"] },
        ],
      },
      validations: [{ expression: "true" }],
    },
  });
  return policy.status === 201 && policy.text.includes(notRing0ConditionName);
}
