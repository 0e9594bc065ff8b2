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
 *   classes, certificate signing or API priority and fairness. Verbs are always named (never "*",
 *   which would include RBAC's bind and escalate), so RBAC's escalation check stops admins from
 *   binding or creating roles beyond their own rights;
 * - webhooks and aggregated APIs, as a cluster admin has them (issue 23): validating and mutating
 *   webhook configurations and APIServices. What they call is dialled only through the control
 *   plane's egress wall (server/provisioners/local/egress.ts), which lets through nothing but the
 *   tenant's own pods. The policy below still guards Ring0's own webhook configuration (admission
 *   policies apply to webhook configurations, while webhooks never do). Admission policies and
 *   their bindings stay read-only: the API server exempts them from every API-based policy, so no
 *   policy could keep a tenant admin from deleting Ring0's. A second policy keeps APIServices to
 *   the tenant's own groups, backed by a Service: no group the control plane or Ring0 serves
 *   (core, apps, batch, …, `*.k8s.io`, `*.kubernetes.io`, `ring0.dev`) can be taken over or removed;
 * - a ValidatingAdmissionPolicy that refuses any change to an object labelled
 *   `ring0.dev/protected` (and refuses the label on anything else) unless Ring0 itself (the
 *   control plane's system:masters identity) makes it. Tenant admins can read these objects but
 *   not edit, delete or impersonate them.
 */
import { type KubeObject, serverSideApply } from "@/server/k8s/apply";
import type { ClusterConnection } from "@/server/k8s/cluster";
import { CustomResourceDefinitionKind } from "@/server/k8s/kinds/cluster-kinds";
import { ClusterRoleBindingKind, ClusterRoleKind } from "@/server/k8s/kinds/rbac";
import { kubeRequest, kubeRequestText } from "@/server/k8s/transport";
import { kubeUserName, roleGroup } from "./kube-identity";

export const protectedLabel = "ring0.dev/protected";
export const tenantAdminClusterRole = "ring0:tenant-admin";
const policyName = "ring0-protect-managed";
const apiServicePolicyName = "ring0-tenant-apiservices";
const webhookPolicyName = "ring0-tenant-webhooks";
/** The matchCondition every tenant webhook carries, and Ring0's identity in a tenant control plane. */
export const webhookConditionName = "ring0-not-ring0";
const notRing0Expression = "!('system:masters' in request.userInfo.groups)";

/** Labels of the objects Ring0 owns in a tenant control plane (the protection policy guards them). */
export const managedLabels = { "app.kubernetes.io/managed-by": "ring0", [protectedLabel]: "true" };

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
];

/** Groups Kubernetes serves that are not under k8s.io (the core group is ""). */
const builtInGroups = [
  "",
  "apps",
  "batch",
  "autoscaling",
  "policy",
  "extensions",
  "k8s.io",
  "kubernetes.io",
  "ring0.dev",
];

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
  "resource.k8s.io",
  "storagemigration.k8s.io",
  "authentication.k8s.io",
  "authorization.k8s.io",
  "metrics.k8s.io",
  "ring0.dev",
  ...tenantAdminGroups,
];

const notRing0 = [{ name: "not-ring0", expression: notRing0Expression }];

/**
 * A ValidatingAdmissionPolicy of Ring0's and its Deny binding: `expression` must hold for every
 * request by anyone but Ring0 (system:masters) that `resourceRule` matches.
 */
function denyingPolicy(
  name: string,
  rule: {
    resourceRule: { apiGroups: string[]; resources: string[]; operations: string[] };
    expression: string;
    messageExpression: string;
  },
): [KubeObject, KubeObject] {
  return [
    {
      apiVersion: "admissionregistration.k8s.io/v1",
      kind: "ValidatingAdmissionPolicy",
      metadata: { name, labels: managedLabels },
      spec: {
        failurePolicy: "Fail",
        matchConstraints: { resourceRules: [{ ...rule.resourceRule, apiVersions: ["*"] }] },
        matchConditions: notRing0,
        validations: [
          { expression: rule.expression, messageExpression: rule.messageExpression, reason: "Forbidden" },
        ],
      },
    },
    {
      apiVersion: "admissionregistration.k8s.io/v1",
      kind: "ValidatingAdmissionPolicyBinding",
      metadata: { name, labels: managedLabels },
      spec: { policyName: name, validationActions: ["Deny"] },
    },
  ];
}

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
  const customGroups = [...new Set(input.customGroups)]
    .filter((name) => name && !reservedGroups.includes(name) && !name.endsWith(".k8s.io"))
    .sort();
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
      {
        apiGroups: [""],
        resources: ["nodes", "persistentvolumes", "componentstatuses"],
        verbs: readVerbs,
      },
      // Named verbs, never "*": that would include RBAC's bind and escalate (and so cluster-admin).
      { apiGroups: tenantAdminGroups, resources: ["*"], verbs: allVerbs },
      // Webhooks and APIServices, as a cluster admin has them: their calls pass the egress wall.
      {
        apiGroups: ["admissionregistration.k8s.io"],
        resources: ["validatingwebhookconfigurations", "mutatingwebhookconfigurations"],
        verbs: allVerbs,
      },
      { apiGroups: ["apiregistration.k8s.io"], resources: ["apiservices"], verbs: allVerbs },
      // Admission policies only to read: an API server's own policies never apply to policies, so
      // none could keep a tenant's hands off Ring0's (the one below among them).
      { apiGroups: ["admissionregistration.k8s.io"], resources: ["*"], verbs: readVerbs },
      ...(customGroups.length > 0 ? [{ apiGroups: customGroups, resources: ["*"], verbs: allVerbs }] : []),
      {
        apiGroups: ["storage.k8s.io", "scheduling.k8s.io", "node.k8s.io", "metrics.k8s.io"],
        resources: ["*"],
        verbs: readVerbs,
      },
    ],
  };
  const admins = clusterRoleBinding("ring0:tenant-admins", tenantAdminClusterRole, [
    group(roleGroup(tenant, "admin")),
    ...[...new Set(input.admins)].sort().map((name) => user(kubeUserName(tenant, name))),
  ]);
  const members = clusterRoleBinding("ring0:tenant-members", "edit", [group(roleGroup(tenant, "member"))]);
  const viewers = clusterRoleBinding("ring0:tenant-viewers", "view", [group(roleGroup(tenant, "viewer"))]);

  const absentOrUnlabelled = (variable: string) =>
    `(${variable} == null || !has(${variable}.metadata.labels) || !('${protectedLabel}' in ${variable}.metadata.labels))`;
  const protection = denyingPolicy(policyName, {
    resourceRule: { apiGroups: ["*"], resources: ["*"], operations: ["CREATE", "UPDATE", "DELETE"] },
    expression: `${absentOrUnlabelled("oldObject")} && ${absentOrUnlabelled("object")}`,
    messageExpression: `'"' + request.name + '" is managed by Ring0 (labelled ${protectedLabel}) and cannot be created, changed or deleted from inside the tenant; ask a Ring0 operator'`,
  });
  const tenantsOwn = (variable: string) =>
    `(${variable} == null || (has(${variable}.spec.service) && has(${variable}.spec.group) && !(${variable}.spec.group in ${JSON.stringify(builtInGroups).replaceAll('"', "'")}) && !${variable}.spec.group.endsWith('.k8s.io') && !${variable}.spec.group.endsWith('.kubernetes.io') && !${variable}.spec.group.endsWith('.ring0.dev')))`;
  const apiServices = denyingPolicy(apiServicePolicyName, {
    resourceRule: {
      apiGroups: ["apiregistration.k8s.io"],
      resources: ["apiservices"],
      operations: ["CREATE", "UPDATE", "DELETE"],
    },
    expression: `${tenantsOwn("oldObject")} && ${tenantsOwn("object")}`,
    messageExpression: `'APIService "' + request.name + '": a tenant registers aggregated APIs only for groups of its own, backed by a Service in the tenant; the built-in groups (core, apps, batch, autoscaling, policy, extensions) and those under k8s.io, kubernetes.io and ring0.dev are served by the control plane or Ring0'`,
  });
  // Tenant webhooks never see Ring0's own requests (it acts as system:masters): a mutating webhook
  // could otherwise rewrite what Ring0 applies (its admin role, its protected labels), and a slow
  // one hold Ring0's shared workers. A mutating policy adds the condition to every webhook a tenant
  // writes; a validating one refuses any that lacks it (policies run after mutation).
  const webhookRule = {
    apiGroups: ["admissionregistration.k8s.io"],
    resources: ["validatingwebhookconfigurations", "mutatingwebhookconfigurations"],
    operations: ["CREATE", "UPDATE"],
  };
  const webhookMutation: KubeObject = {
    apiVersion: "admissionregistration.k8s.io/v1",
    kind: "MutatingAdmissionPolicy",
    metadata: { name: webhookPolicyName, labels: managedLabels },
    spec: {
      failurePolicy: "Fail",
      reinvocationPolicy: "IfNeeded",
      matchConstraints: { resourceRules: [{ ...webhookRule, apiVersions: ["*"] }] },
      matchConditions: [...notRing0, { name: "has-webhooks", expression: "has(object.webhooks)" }],
      mutations: [
        {
          patchType: "ApplyConfiguration",
          applyConfiguration: {
            expression: `Object{webhooks: object.webhooks.map(w, Object.webhooks{name: w.name, matchConditions: [Object.webhooks.matchConditions{name: ${JSON.stringify(webhookConditionName)}, expression: ${JSON.stringify(notRing0Expression)}}]})}`,
          },
        },
      ],
    },
  };
  const webhookMutationBinding: KubeObject = {
    apiVersion: "admissionregistration.k8s.io/v1",
    kind: "MutatingAdmissionPolicyBinding",
    metadata: { name: webhookPolicyName, labels: managedLabels },
    spec: { policyName: webhookPolicyName },
  };
  const webhookCheck = denyingPolicy(webhookPolicyName, {
    resourceRule: webhookRule,
    expression: `!has(object.webhooks) || object.webhooks.all(w, has(w.matchConditions) && w.matchConditions.exists(c, c.name == ${JSON.stringify(webhookConditionName)} && c.expression == ${JSON.stringify(notRing0Expression)}))`,
    messageExpression: `'webhook configuration "' + request.name + '": every webhook must keep the matchCondition ${webhookConditionName} Ring0 adds (it keeps tenant webhooks off the requests Ring0 makes)'`,
  });
  return [
    ...namespaces,
    adminRole,
    admins,
    members,
    viewers,
    ...protection,
    ...apiServices,
    webhookMutation,
    webhookMutationBinding,
    ...webhookCheck,
  ];
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
 * Whether the protection policy is in force yet: a ValidatingAdmissionPolicy takes effect only once
 * the API server's policy informers have it, a moment after it is created, and until then a tenant
 * admin could delete Ring0's bindings. Probe with a dry-run delete of the admins' binding as a tenant
 * admin: refused by the policy means in force. Dry runs pass through admission, and change nothing.
 */
async function protectionEnforced(
  conn: ClusterConnection,
  tenant: string,
  signal?: AbortSignal,
): Promise<boolean> {
  const probe = await kubeRequestText(conn, {
    method: "DELETE",
    path: ClusterRoleBindingKind.path({ name: "ring0:tenant-admins" }),
    query: { dryRun: "All" },
    headers: {
      "Impersonate-User": kubeUserName(tenant, "ring0:protection-probe"),
      "Impersonate-Group": roleGroup(tenant, "admin"),
    },
    signal,
  });
  if (probe.status !== 403 || !probe.text.includes("managed by Ring0")) return false;
  // And tenant webhooks get Ring0's condition: a dry-run webhook configuration comes back with it.
  const webhook = await kubeRequestText(conn, {
    method: "POST",
    path: "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations",
    query: { dryRun: "All" },
    headers: {
      "Impersonate-User": kubeUserName(tenant, "ring0:protection-probe"),
      "Impersonate-Group": roleGroup(tenant, "admin"),
    },
    body: {
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
    },
    signal,
  });
  return webhook.status === 201 && webhook.text.includes(webhookConditionName);
}
