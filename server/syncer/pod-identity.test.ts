import { describe, expect, it } from "vitest";
import {
  DEFAULT_TOKEN_SECONDS,
  identityRefusal,
  identitySecretName,
  kubernetesServiceEnv,
  MAX_TOKEN_SOURCES,
  needsIdentity,
  refreshDue,
  tokenNamesNode,
  tokenRequest,
  tokenSources,
} from "./pod-identity";
import { superEphemeralContainers, superPodSpec } from "./super-pod-spec";
import { isSynced } from "./synced-kinds";

type Json = Record<string, unknown>;

const api = { host: "10.244.255.7", port: 443, ca: "-----BEGIN CERTIFICATE-----\n…" };
const secret = identitySecretName("uid-1");

/** A pod as the tenant's API server stores it: its ServiceAccount admission added kube-api-access. */
const podSpec: Json = {
  serviceAccountName: "builder",
  containers: [
    {
      name: "main",
      image: "kubectl",
      env: [{ name: "MODE", value: "loop" }],
      volumeMounts: [
        { name: "kube-api-access-abcde", mountPath: "/var/run/secrets/kubernetes.io/serviceaccount" },
      ],
    },
  ],
  volumes: [
    {
      name: "kube-api-access-abcde",
      projected: {
        defaultMode: 420,
        sources: [
          { serviceAccountToken: { path: "token", expirationSeconds: 3607 } },
          { configMap: { name: "kube-root-ca.crt", items: [{ key: "ca.crt", path: "ca.crt" }] } },
          {
            downwardAPI: {
              items: [{ path: "namespace", fieldRef: { apiVersion: "v1", fieldPath: "metadata.namespace" } }],
            },
          },
        ],
      },
    },
  ],
};

function envOf(container: unknown): Record<string, unknown> {
  return Object.fromEntries(
    ((container as { env?: Json[] }).env ?? []).map((variable) => [
      variable.name,
      variable.value ?? variable,
    ]),
  );
}

describe("a tenant pod's identity below", () => {
  it("reads the tenant's token and root CA from the pod's identity secret, and keeps the mount", () => {
    const spec = superPodSpec(podSpec, { podApi: api }, "acme", "uid-1");
    expect(spec.automountServiceAccountToken).toBe(false);
    const volume = (spec.volumes as Json[])[0] as { name: string; projected: { sources: Json[] } };
    expect(volume.name).toBe("kube-api-access-abcde");
    expect(volume.projected.sources).toEqual([
      { secret: { name: secret, items: [{ key: "token.kube-api-access-abcde.0", path: "token" }] } },
      { secret: { name: secret, items: [{ key: "ca.crt", path: "ca.crt" }] } },
      // The tenant's namespace, as the Downward API gives it below.
      {
        downwardAPI: {
          items: [
            {
              path: "namespace",
              fieldRef: { apiVersion: "v1", fieldPath: "metadata.annotations['ring0.dev/tenant-namespace']" },
            },
          ],
        },
      },
    ]);
    const container = (spec.containers as Json[])[0];
    expect(container?.volumeMounts).toEqual([
      { name: "kube-api-access-abcde", mountPath: "/var/run/secrets/kubernetes.io/serviceaccount" },
    ]);
  });

  it("points every container at the tenant's API server, never the super cluster's", () => {
    const spec = superPodSpec(
      { ...podSpec, initContainers: [{ name: "setup", image: "busybox" }] },
      { podApi: api },
      "acme",
      "uid-1",
    );
    for (const container of [...(spec.containers as Json[]), ...(spec.initContainers as Json[])]) {
      const env = envOf(container);
      expect(env.KUBERNETES_SERVICE_HOST).toBe("10.244.255.7");
      expect(env.KUBERNETES_SERVICE_PORT).toBe("443");
      expect(env.KUBERNETES_PORT_443_TCP_ADDR).toBe("10.244.255.7");
      expect(env.KUBERNETES_PORT).toBe("tcp://10.244.255.7:443");
    }
    expect(envOf((spec.containers as Json[])[0]).MODE).toBe("loop");
  });

  it("overrides the kubelet's 443 variables even when the tenant's API is on another port", () => {
    const env = Object.fromEntries(
      kubernetesServiceEnv({ host: "10.0.0.9", port: 6443 }).map((v) => [v.name, v.value]),
    );
    expect(env.KUBERNETES_PORT_443_TCP_ADDR).toBe("10.0.0.9");
    expect(env.KUBERNETES_PORT_6443_TCP).toBe("tcp://10.0.0.9:6443");
    expect(env.KUBERNETES_SERVICE_PORT).toBe("6443");
  });

  it("leaves a container's own KUBERNETES_SERVICE_HOST alone", () => {
    const spec = superPodSpec(
      {
        containers: [{ name: "main", image: "x", env: [{ name: "KUBERNETES_SERVICE_HOST", value: "mine" }] }],
      },
      { podApi: api },
      "acme",
      "uid-1",
    );
    const env = (((spec.containers as Json[])[0]?.env ?? []) as Json[]).filter(
      (variable) => variable.name === "KUBERNETES_SERVICE_HOST",
    );
    expect(env).toEqual([{ name: "KUBERNETES_SERVICE_HOST", value: "mine" }]);
  });

  it("reads kube-root-ca.crt from the identity secret wherever the pod names it", () => {
    const spec = superPodSpec(
      {
        containers: [
          {
            name: "main",
            image: "x",
            env: [
              { name: "CA", valueFrom: { configMapKeyRef: { name: "kube-root-ca.crt", key: "ca.crt" } } },
            ],
            envFrom: [{ configMapRef: { name: "kube-root-ca.crt" } }, { configMapRef: { name: "settings" } }],
          },
        ],
        volumes: [
          { name: "ca", configMap: { name: "kube-root-ca.crt", defaultMode: 292 } },
          { name: "settings", configMap: { name: "settings" } },
        ],
      },
      { podApi: api },
      "acme",
      "uid-1",
    );
    expect(spec.volumes).toEqual([
      {
        name: "ca",
        secret: { secretName: secret, defaultMode: 292, items: [{ key: "ca.crt", path: "ca.crt" }] },
      },
      { name: "settings", configMap: { name: "settings" } },
    ]);
    const container = (spec.containers as Json[])[0] as { env: Json[]; envFrom: Json[] };
    expect(container.env.find((variable) => variable.name === "CA")).toEqual({
      name: "CA",
      valueFrom: { secretKeyRef: { name: secret, key: "ca.crt" } },
    });
    // envFrom of the root CA map: its one key, never the identity secret's tokens.
    expect(container.envFrom).toEqual([{ configMapRef: { name: "settings" } }]);
    expect(container.env.find((variable) => variable.name === "ca.crt")).toEqual({
      name: "ca.crt",
      valueFrom: { secretKeyRef: { name: secret, key: "ca.crt" } },
    });
  });

  it("gives ephemeral containers the same identity", () => {
    const [debug] = superEphemeralContainers(
      {
        ...podSpec,
        ephemeralContainers: [
          {
            name: "debug",
            image: "busybox",
            volumeMounts: [
              { name: "kube-api-access-abcde", mountPath: "/var/run/secrets/kubernetes.io/serviceaccount" },
            ],
          },
        ],
      },
      { podApi: api },
      "uid-1",
    );
    expect(envOf(debug).KUBERNETES_SERVICE_HOST).toBe("10.244.255.7");
    expect(debug?.volumeMounts).toHaveLength(1);
  });

  it("drops token volumes and sets no variables when the tenant's pods have no API address", () => {
    const spec = superPodSpec(podSpec, {}, "acme", "uid-1");
    expect(spec.volumes).toBeUndefined();
    expect(envOf((spec.containers as Json[])[0]).KUBERNETES_SERVICE_HOST).toBeUndefined();
  });

  it("asks for each token with its source's audience and lifetime, bound to the tenant's pod", () => {
    const sources = tokenSources({
      volumes: [
        { name: "data", emptyDir: {} },
        {
          name: "vault",
          projected: {
            sources: [
              { configMap: { name: "x" } },
              { serviceAccountToken: { audience: "vault", expirationSeconds: 7200, path: "t" } },
              { serviceAccountToken: { expirationSeconds: 60, path: "short" } },
            ],
          },
        },
      ],
    });
    expect(sources).toEqual([
      { key: "token.vault.1", audience: "vault", expirationSeconds: 7200 },
      // Below Kubernetes' minimum: the default, as the tenant's API server would not store it anyway.
      { key: "token.vault.2", expirationSeconds: DEFAULT_TOKEN_SECONDS },
    ]);
    expect(tokenRequest(sources[0] as never, { name: "web", uid: "uid-1" })).toEqual({
      apiVersion: "authentication.k8s.io/v1",
      kind: "TokenRequest",
      spec: {
        audiences: ["vault"],
        expirationSeconds: 7200,
        boundObjectRef: { apiVersion: "v1", kind: "Pod", name: "web", uid: "uid-1" },
      },
    });
    expect(refreshDue(0, sources)).toBe(0.8 * 3600 * 1000);
    // A lifetime the API server cut short counts, not the one asked for.
    expect(refreshDue(0, sources, [1200])).toBe(0.8 * 1200 * 1000);
    expect(refreshDue(0, [{ key: "k", expirationSeconds: 7 * 24 * 3600 }])).toBe(24 * 3600 * 1000);
    // Only the CA: renewed daily, so a new CA reaches the pod.
    expect(refreshDue(0, [])).toBe(24 * 3600 * 1000);
  });

  it("needs an identity secret only for a pod that holds a token or reads the root CA", () => {
    expect(needsIdentity(podSpec)).toBe(true);
    expect(needsIdentity({ containers: [{ name: "main", image: "x" }] })).toBe(false);
    expect(
      needsIdentity({
        containers: [{ name: "m", image: "x", envFrom: [{ configMapRef: { name: "kube-root-ca.crt" } }] }],
      }),
    ).toBe(true);
  });

  it("refuses a pod that names an identity secret itself, or holds too many tokens", () => {
    const reading = (volume: Json) => ({ containers: [{ name: "m", image: "x" }], volumes: [volume] });
    expect(
      identityRefusal(reading({ name: "v", secret: { secretName: identitySecretName("other-pod") } })),
    ).toContain("ring0-identity-");
    expect(
      identityRefusal(
        reading({ name: "v", projected: { sources: [{ secret: { name: identitySecretName("x") } }] } }),
      ),
    ).not.toBeNull();
    expect(
      identityRefusal({
        containers: [
          {
            name: "m",
            image: "x",
            env: [{ name: "T", valueFrom: { secretKeyRef: { name: identitySecretName("x"), key: "k" } } }],
          },
        ],
      }),
    ).not.toBeNull();
    expect(identityRefusal(podSpec)).toBeNull();
    const many = {
      containers: [{ name: "m", image: "x" }],
      volumes: [
        {
          name: "many",
          projected: {
            sources: Array.from({ length: MAX_TOKEN_SOURCES + 1 }, (_, index) => ({
              serviceAccountToken: { path: `t${index}` },
            })),
          },
        },
      ],
    };
    expect(identityRefusal(many)).toContain(`at most ${MAX_TOKEN_SOURCES}`);
  });

  it("never copies a tenant secret under an identity secret's name", () => {
    const named = (name: string) => ({
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name, namespace: "team" },
    });
    expect(isSynced("secret", named(secret))).toBe(false);
    expect(isSynced("secret", named("ring0-identity"))).toBe(true);
  });
});

describe("tokenNamesNode", () => {
  const jwt = (claims: object) => `e30.${Buffer.from(JSON.stringify(claims)).toString("base64url")}.c2ln`;
  it("wants the node's name and uid in the token's kubernetes.io claims", () => {
    const pod = { name: "p", uid: "u" };
    expect(
      tokenNamesNode(jwt({ "kubernetes.io": { pod, node: { name: "ring0-real-0", uid: "n-1" } } })),
    ).toBe(true);
    expect(tokenNamesNode(jwt({ "kubernetes.io": { pod, node: { name: "ring0-real-0" } } }))).toBe(false);
    expect(tokenNamesNode(jwt({ "kubernetes.io": { pod } }))).toBe(false);
    expect(tokenNamesNode("not-a-jwt")).toBe(false);
    expect(tokenNamesNode("a.%%%.c")).toBe(false);
    expect(tokenNamesNode("")).toBe(false);
  });
});
