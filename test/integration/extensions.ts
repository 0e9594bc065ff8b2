/**
 * The control-plane extensions a tenant admin writes in the egress wall's tests (issue 23): a
 * validating webhook on ConfigMaps, an APIService, a Service whose only endpoint is an address
 * the tenant chose, and the tenant's own webhook pod behind Service `hook`. One shape each, for the
 * local, real-node, control-planes-in-pods and abuse suites.
 */
import { HTTPD_IMAGE } from "@/server/cluster/real-node/plan";
import { issueCa, issueLeaf } from "@/server/pki/certificates";

/** A CA and the serving certificate of Service `hook` in `default` it signs; the CA as a caBundle. */
export async function hookTls(): Promise<{ cert: string; key: string; caBundle: string }> {
  const now = new Date();
  const ca = await issueCa({ name: "CN=tenant-webhook-ca", days: 1, now });
  const leaf = await issueLeaf({
    issuer: ca,
    subject: "CN=hook.default.svc",
    usages: ["serverAuth"],
    dns: ["hook.default.svc", "hook.default.svc.cluster.local"],
    days: 1,
    now,
  });
  return { cert: leaf.cert, key: leaf.key, caBundle: Buffer.from(ca.cert).toString("base64") };
}

/**
 * A tenant's webhook pod `hook` (the real nodes' httpd image: /admit, /convert, /requests over TLS
 * on 8443) and its Service `hook` on 443.
 */
export function hookObjects(tls: { cert: string; key: string }): object[] {
  return [
    {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "hook", labels: { app: "hook" } },
      spec: {
        containers: [
          {
            name: "hook",
            image: HTTPD_IMAGE,
            env: [
              { name: "PORT", value: "8443" },
              { name: "TLS_CERT", value: tls.cert },
              { name: "TLS_KEY", value: tls.key },
            ],
            ports: [{ containerPort: 8443 }],
          },
        ],
      },
    },
    {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: "hook" },
      spec: { selector: { app: "hook" }, ports: [{ port: 443, targetPort: 8443 }] },
    },
  ];
}

/** A ConfigMap that webhook `name` (configMapWebhook) is called for, with `labels` besides. */
export function webhookConfigMap(name: string, labels: Record<string, string> = {}) {
  return {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { generateName: `${name}-`, labels: { webhook: name, ...labels } },
  };
}

/** A validating webhook on ConfigMap creates labelled `webhook: <name>`, failing closed, called at `clientConfig`. */
export function configMapWebhook(name: string, clientConfig: object) {
  return {
    apiVersion: "admissionregistration.k8s.io/v1",
    kind: "ValidatingWebhookConfiguration",
    metadata: { name },
    webhooks: [
      {
        name: `${name}.example.com`,
        clientConfig,
        rules: [{ apiGroups: [""], apiVersions: ["v1"], operations: ["CREATE"], resources: ["configmaps"] }],
        objectSelector: { matchLabels: { webhook: name } },
        failurePolicy: "Fail",
        sideEffects: "None",
        admissionReviewVersions: ["v1"],
        timeoutSeconds: 5,
      },
    ],
  };
}

/** An APIService for `group` (default version v1) served by `service`; TLS checked with `caBundle`, or not at all. */
export function apiService(
  group: string,
  service: { namespace: string; name: string; port: number } | undefined,
  options: { version?: string; caBundle?: string } = {},
) {
  const version = options.version ?? "v1";
  return {
    apiVersion: "apiregistration.k8s.io/v1",
    kind: "APIService",
    metadata: { name: `${version}.${group}` },
    spec: {
      group,
      version,
      ...(service ? { service } : {}),
      ...(options.caBundle
        ? { caBundle: options.caBundle }
        : { insecureSkipTLSVerify: service !== undefined }),
      groupPriorityMinimum: 1000,
      versionPriority: 15,
    },
  };
}

/**
 * A Service without a selector (port 443 → `port`) and its one EndpointSlice, whose only endpoint is
 * `address` — an address the tenant wrote, which the wall must judge for itself.
 */
export function serviceAt(
  namespace: string,
  name: string,
  endpoint: { address: string; port: number; addressType?: "IPv4" | "FQDN" },
) {
  return [
    {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name, namespace },
      spec: { ports: [{ port: 443, targetPort: endpoint.port }] },
    },
    {
      apiVersion: "discovery.k8s.io/v1",
      kind: "EndpointSlice",
      metadata: { name: `${name}-1`, namespace, labels: { "kubernetes.io/service-name": name } },
      addressType: endpoint.addressType ?? "IPv4",
      endpoints: [{ addresses: [endpoint.address], conditions: { ready: true } }],
      ports: [{ port: endpoint.port, protocol: "TCP" }],
    },
  ];
}

/** Request headers that impersonate `user` (and one group) through a system:masters connection. */
export function impersonating(user: string, group?: string): Record<string, string> {
  return { "Impersonate-User": user, ...(group ? { "Impersonate-Group": group } : {}) };
}

/** A namespaced CRD "gadgets" of `group` with an open schema, and a Gadget of it. */
export function gadgetCrd(group: string) {
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: `gadgets.${group}` },
    spec: {
      group,
      scope: "Namespaced",
      names: { plural: "gadgets", singular: "gadget", kind: "Gadget" },
      versions: [
        {
          name: "v1",
          served: true,
          storage: true,
          schema: { openAPIV3Schema: { type: "object", "x-kubernetes-preserve-unknown-fields": true } },
        },
      ],
    },
  };
}

export function gadget(group: string, name: string) {
  return { apiVersion: `${group}/v1`, kind: "Gadget", metadata: { name } };
}
