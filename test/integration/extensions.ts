/**
 * The control-plane extensions a tenant admin writes in the egress wall's tests (issue 23): a
 * validating webhook on ConfigMaps, an APIService, and a Service whose only endpoint is an address
 * the tenant chose. One shape each, for the local, real-node and abuse suites.
 */

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
