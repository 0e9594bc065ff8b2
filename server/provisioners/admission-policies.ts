/**
 * Ring0's admission policies in every tenant control plane, loaded from files the API server reads
 * at start (manifest-based admission, KEP-5793, alpha in 1.36 behind
 * `ManifestBasedAdmissionControlConfig`) instead of created through its API. A policy created
 * through the API could be deleted by anyone allowed to write policies, and API policies never apply
 * to policies; a policy from a file has no API object at all (its name ends in `.static.k8s.io`,
 * which the API refuses), and it does apply to policies. So tenant admins can write their own
 * admission policies, webhooks and APIServices as a cluster admin does, while these hold:
 *
 * - `ring0-protect-managed`: no change to an object labelled `ring0.dev/protected` (and no such
 *   label on anything else) unless Ring0 itself (the control plane's system:masters identity) makes
 *   it. Tenant admins read Ring0's objects but cannot edit, delete or impersonate them.
 * - `ring0-tenant-apiservices`: APIServices only for the tenant's own groups, backed by a Service:
 *   no group the control plane or Ring0 serves can be taken over or removed.
 * - `ring0-tenant-flowcontrol`: API priority and fairness is the tenant's, but the mandatory `exempt`
 *   FlowSchema and priority level stay as they are and tenant FlowSchemas come after it
 *   (matchingPrecedence above 1), so Ring0's requests (system:masters) are never throttled.
 * - `ring0-tenant-webhooks` and `ring0-tenant-policies`: every webhook, admission policy and mutating
 *   policy a tenant writes carries the matchCondition `ring0-not-ring0`, which keeps it off Ring0's own
 *   requests. A mutating policy adds it; a validating one refuses any that lacks it (policies run
 *   after mutation). Without it a tenant's mutation could rewrite what Ring0 applies (its admin role,
 *   its protected labels) and so hand the tenant rights Ring0 withholds, and a slow webhook could hold
 *   Ring0's shared workers.
 *
 * Pure: the provisioners write these (local: files beside the control plane; kubernetes: a
 * ConfigMap mounted into the API server's pod).
 */
import type { KubeObject } from "@/server/k8s/apply";

export const protectedLabel = "ring0.dev/protected";

/** Labels of the objects Ring0 owns in a tenant control plane (the protection policy guards them). */
export const managedLabels = { "app.kubernetes.io/managed-by": "ring0", [protectedLabel]: "true" };

/** The matchCondition every tenant webhook and policy carries. */
export const notRing0ConditionName = "ring0-not-ring0";
/** Ring0 acts in a tenant control plane as its system:masters identity; nobody else has that group. */
export const notRing0Expression = "!('system:masters' in request.userInfo.groups)";

/** What every manifest-loaded object's name must end with (the API refuses such names). */
export const STATIC_SUFFIX = ".static.k8s.io";
export const STATIC_ADMISSION_FEATURE_GATE = "ManifestBasedAdmissionControlConfig";

/** Groups Kubernetes serves that are not under k8s.io (the core group is ""). */
export const builtInGroups = [
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

const staticName = (name: string) => `${name}${STATIC_SUFFIX}`;
const notRing0 = [{ name: "not-ring0", expression: notRing0Expression }];
const cel = (value: string) => JSON.stringify(value);

interface ResourceRule {
  apiGroups: string[];
  resources: string[];
  operations: string[];
}

/** A ValidatingAdmissionPolicy and its Deny binding: `expression` must hold for every request by anyone but Ring0. */
function denyingPolicy(
  name: string,
  rule: { resourceRule: ResourceRule; expression: string; messageExpression: string },
): KubeObject[] {
  return [
    {
      apiVersion: "admissionregistration.k8s.io/v1",
      kind: "ValidatingAdmissionPolicy",
      metadata: { name: staticName(name) },
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
      metadata: { name: staticName(name) },
      spec: { policyName: staticName(name), validationActions: ["Deny"] },
    },
  ];
}

/** A MutatingAdmissionPolicy and its binding: `expression` is an ApplyConfiguration for anyone's request but Ring0's. */
function mutatingPolicy(
  name: string,
  rule: {
    resourceRule: ResourceRule;
    matchConditions: { name: string; expression: string }[];
    expression: string;
  },
): KubeObject[] {
  return [
    {
      apiVersion: "admissionregistration.k8s.io/v1",
      kind: "MutatingAdmissionPolicy",
      metadata: { name: staticName(name) },
      spec: {
        failurePolicy: "Fail",
        reinvocationPolicy: "IfNeeded",
        matchConstraints: { resourceRules: [{ ...rule.resourceRule, apiVersions: ["*"] }] },
        matchConditions: [...notRing0, ...rule.matchConditions],
        mutations: [{ patchType: "ApplyConfiguration", applyConfiguration: { expression: rule.expression } }],
      },
    },
    {
      apiVersion: "admissionregistration.k8s.io/v1",
      kind: "MutatingAdmissionPolicyBinding",
      metadata: { name: staticName(name) },
      spec: { policyName: staticName(name) },
    },
  ];
}

/**
 * The name of the object a request is about. Not `request.name`: a deletecollection is admitted item
 * by item with the collection's empty name, each item only as `oldObject`.
 */
const objectName =
  "(object != null && has(object.metadata.name) ? object.metadata.name : (oldObject != null && has(oldObject.metadata.name) ? oldObject.metadata.name : ''))";

const absentOrUnlabelled = (variable: string) =>
  `(${variable} == null || !has(${variable}.metadata.labels) || !('${protectedLabel}' in ${variable}.metadata.labels))`;

const tenantsOwnApiService = (variable: string) =>
  `(${variable} == null || (has(${variable}.spec.service) && has(${variable}.spec.group) && !(${variable}.spec.group in ${JSON.stringify(builtInGroups).replaceAll('"', "'")}) && !${variable}.spec.group.endsWith('.k8s.io') && !${variable}.spec.group.endsWith('.kubernetes.io') && !${variable}.spec.group.endsWith('.ring0.dev')))`;

const condition = `${notRing0ConditionName}`;
const hasCondition = (conditions: string) =>
  `${conditions}.exists(c, c.name == ${cel(condition)} && c.expression == ${cel(notRing0Expression)})`;

/**
 * At most this many matchConditions on a tenant webhook or policy, Ring0's included: the API server
 * evaluates them all within one cost budget (2.5M, 1M an expression) before it looks at any result,
 * and a budget run out would refuse Ring0's requests too (failurePolicy Fail).
 */
const MAX_CONDITIONS = 3;

const webhookRule: ResourceRule = {
  apiGroups: ["admissionregistration.k8s.io"],
  resources: ["validatingwebhookconfigurations", "mutatingwebhookconfigurations"],
  operations: ["CREATE", "UPDATE"],
};
const policyRule: ResourceRule = {
  apiGroups: ["admissionregistration.k8s.io"],
  resources: ["validatingadmissionpolicies", "mutatingadmissionpolicies"],
  operations: ["CREATE", "UPDATE"],
};

/** The validating policies and bindings (one file), and the mutating ones (another). Pure: unit-tested. */
export function staticAdmissionPolicies(): { validating: KubeObject[]; mutating: KubeObject[] } {
  const protection = denyingPolicy("ring0-protect-managed", {
    resourceRule: { apiGroups: ["*"], resources: ["*"], operations: ["CREATE", "UPDATE", "DELETE"] },
    expression: `${absentOrUnlabelled("oldObject")} && ${absentOrUnlabelled("object")}`,
    messageExpression: `'"' + ${objectName} + '" is managed by Ring0 (labelled ${protectedLabel}) and cannot be created, changed or deleted from inside the tenant; ask a Ring0 operator'`,
  });
  const apiServices = denyingPolicy("ring0-tenant-apiservices", {
    resourceRule: {
      apiGroups: ["apiregistration.k8s.io"],
      resources: ["apiservices"],
      operations: ["CREATE", "UPDATE", "DELETE"],
    },
    expression: `${tenantsOwnApiService("oldObject")} && ${tenantsOwnApiService("object")}`,
    messageExpression: `'APIService "' + ${objectName} + '": a tenant registers aggregated APIs only for groups of its own, backed by a Service in the tenant; the built-in groups (core, apps, batch, autoscaling, policy, extensions) and those under k8s.io, kubernetes.io and ring0.dev are served by the control plane or Ring0'`,
  });
  const conditionLiteral = (type: string) =>
    `${type}{name: ${cel(condition)}, expression: ${cel(notRing0Expression)}}`;
  const webhookMutation = mutatingPolicy("ring0-tenant-webhooks", {
    resourceRule: webhookRule,
    matchConditions: [{ name: "has-webhooks", expression: "has(object.webhooks)" }],
    expression: `Object{webhooks: object.webhooks.map(w, Object.webhooks{name: w.name, matchConditions: [${conditionLiteral("Object.webhooks.matchConditions")}]})}`,
  });
  const webhookCheck = denyingPolicy("ring0-tenant-webhooks", {
    resourceRule: webhookRule,
    expression: `!has(object.webhooks) || object.webhooks.all(w, has(w.matchConditions) && ${hasCondition("w.matchConditions")} && size(w.matchConditions) <= ${MAX_CONDITIONS})`,
    messageExpression: `'webhook configuration "' + ${objectName} + '": every webhook must keep the matchCondition ${condition} Ring0 adds (it keeps tenant webhooks off the requests Ring0 makes), with at most ${MAX_CONDITIONS - 1} of its own'`,
  });
  const policyMutation = mutatingPolicy("ring0-tenant-policies", {
    resourceRule: policyRule,
    matchConditions: [],
    expression: `Object{spec: Object.spec{matchConditions: [${conditionLiteral("Object.spec.matchConditions")}]}}`,
  });
  const policyCheck = denyingPolicy("ring0-tenant-policies", {
    resourceRule: policyRule,
    expression: `has(object.spec.matchConditions) && ${hasCondition("object.spec.matchConditions")} && size(object.spec.matchConditions) <= ${MAX_CONDITIONS} && (!has(object.spec.paramKind) || (has(object.spec.failurePolicy) && object.spec.failurePolicy == 'Ignore'))`,
    messageExpression: `'admission policy "' + ${objectName} + '": it must keep the matchCondition ${condition} Ring0 adds (it keeps tenant policies off the requests Ring0 makes), with at most ${MAX_CONDITIONS - 1} of its own, and a policy with paramKind takes failurePolicy Ignore (parameters are resolved before any condition, so a missing one would refuse Ring0 too)'`,
  });
  // API priority and fairness, as a cluster admin has it, but Ring0's requests stay exempt: the
  // mandatory "exempt" FlowSchema (precedence 1) matches system:masters before any of the tenant's.
  const flowControl = denyingPolicy("ring0-tenant-flowcontrol", {
    resourceRule: {
      apiGroups: ["flowcontrol.apiserver.k8s.io"],
      resources: ["flowschemas", "prioritylevelconfigurations"],
      operations: ["CREATE", "UPDATE", "DELETE"],
    },
    expression: `${objectName} != 'exempt' && (request.resource.resource != 'flowschemas' || object == null || (has(object.spec.matchingPrecedence) && object.spec.matchingPrecedence > 1 && object.spec.priorityLevelConfiguration.name != 'exempt'))`,
    messageExpression: `'"' + ${objectName} + '": the exempt FlowSchema and priority level keep the requests of Ring0 unthrottled, so they stay as they are, and tenant FlowSchemas take a matchingPrecedence above 1 (after exempt) and a priority level of their own'`,
  });
  return {
    validating: [...protection, ...apiServices, ...webhookCheck, ...policyCheck, ...flowControl],
    mutating: [...webhookMutation, ...policyMutation],
  };
}

/** A `kind: List` document of objects, the form a static manifests dir reads in one file. */
export function manifestList(items: KubeObject[]): string {
  return `${JSON.stringify({ apiVersion: "v1", kind: "List", items }, null, 2)}\n`;
}

/** The AdmissionConfiguration plugin entries that load the two static manifest dirs. */
export function staticPolicyPlugins(dirs: { validating: string; mutating: string }): object[] {
  return [
    {
      name: "ValidatingAdmissionPolicy",
      configuration: {
        apiVersion: "apiserver.config.k8s.io/v1",
        kind: "ValidatingAdmissionPolicyConfiguration",
        staticManifestsDir: dirs.validating,
      },
    },
    {
      name: "MutatingAdmissionPolicy",
      configuration: {
        apiVersion: "apiserver.config.k8s.io/v1",
        kind: "MutatingAdmissionPolicyConfiguration",
        staticManifestsDir: dirs.mutating,
      },
    },
  ];
}

/**
 * Names of the policies Ring0 created through the API before they moved into files: removed from
 * control planes made before (the same rules now hold from the files).
 */
export const legacyApiPolicies = [
  {
    kind: "ValidatingAdmissionPolicy",
    resource: "validatingadmissionpolicies",
    names: ["ring0-protect-managed", "ring0-tenant-apiservices", "ring0-tenant-webhooks"],
  },
  {
    kind: "ValidatingAdmissionPolicyBinding",
    resource: "validatingadmissionpolicybindings",
    names: ["ring0-protect-managed", "ring0-tenant-apiservices", "ring0-tenant-webhooks"],
  },
  {
    kind: "MutatingAdmissionPolicy",
    resource: "mutatingadmissionpolicies",
    names: ["ring0-tenant-webhooks"],
  },
  {
    kind: "MutatingAdmissionPolicyBinding",
    resource: "mutatingadmissionpolicybindings",
    names: ["ring0-tenant-webhooks"],
  },
] as const;
