import { describe, expect, it } from "vitest";
import type { KubeObject } from "@/server/k8s/apply";
import { type ControlPlanePki, pkiFiles } from "../pki";
import {
  authorizationKubeconfig,
  type ControlPlaneManifestOptions,
  controlPlaneNamespace,
  controlPlanePkiNames,
  controlPlaneServiceManifests,
  controlPlaneServiceName,
  controlPlaneUrl,
  controlPlaneWorkloadManifests,
  defaultImages,
  kubeconfigSecretManifest,
  kubeletClientFiles,
  mountedSecretFiles,
  namespaceManifest,
  PKI_SECRET,
  pkiChecksum,
  pkiSecretManifest,
  renderKubeconfig,
} from "./manifests";

const longTenant = `${"a".repeat(20)}-${"b".repeat(19)}`; // 40 characters

function options(overrides: Partial<ControlPlaneManifestOptions> = {}): ControlPlaneManifestOptions {
  return {
    tenant: "acme",
    version: "1.36.4",
    suspended: false,
    images: defaultImages,
    etcdStorage: { kind: "emptyDir" },
    clusterDomain: "cluster.local",
    addresses: { apiserver: "10.0.0.10", etcd: "10.0.0.11" },
    secretFiles: {
      [PKI_SECRET]: Object.fromEntries(Object.values(pkiFiles).map((file) => [file, `${file} v1`])),
    },
    ...overrides,
  };
}

type Workload = KubeObject & {
  spec: {
    replicas: number;
    template: {
      metadata: { labels: Record<string, string>; annotations: Record<string, string> };
      spec: {
        containers: { image: string; args: string[] }[];
        volumes: { name: string; emptyDir?: object }[];
      };
    };
    volumeClaimTemplates?: unknown[];
  };
};

function find(objects: KubeObject[], kind: string, name: string): Workload {
  const found = objects.find((object) => object.kind === kind && object.metadata.name === name);
  if (!found) throw new Error(`no ${kind} ${name}`);
  return found as Workload;
}

const pemPair = (label: string) => ({ cert: `CERT ${label}`, key: `KEY ${label}` });
const fakePki = {
  ca: pemPair("ca"),
  admin: pemPair("admin"),
  controllerManager: pemPair("cm"),
} as unknown as ControlPlanePki;

describe("control plane names", () => {
  it("is ring0-cp-<tenant> in the tenant's own namespace", () => {
    expect(controlPlaneNamespace("acme")).toBe("ring0-cp-acme");
    expect(controlPlaneServiceName("acme")).toBe("https://kube-apiserver.ring0-cp-acme.svc:6443");
  });

  it("keeps every name within 63 characters for a 40-character tenant", () => {
    const objects = [
      namespaceManifest(longTenant),
      ...controlPlaneWorkloadManifests(options({ tenant: longTenant })),
    ];
    for (const object of objects) {
      expect(object.metadata.name.length).toBeLessThanOrEqual(63);
      for (const value of Object.values(object.metadata.labels ?? {}))
        expect(value.length).toBeLessThanOrEqual(63);
    }
    expect(controlPlaneNamespace(longTenant)).toBe(`ring0-cp-${longTenant}`);
  });

  it("shortens the namespace of a 63-character tenant with a hash, distinct per tenant", () => {
    const a = controlPlaneNamespace(`${"x".repeat(62)}a`);
    const b = controlPlaneNamespace(`${"x".repeat(62)}b`);
    expect(a.length).toBeLessThanOrEqual(63);
    expect(a).toMatch(/^ring0-cp-x+-[0-9a-f]{10}$/);
    expect(a).not.toBe(b);
  });
});

describe("control plane manifests", () => {
  it("labels everything as Ring0's, for the tenant", () => {
    const objects = [namespaceManifest("acme"), ...controlPlaneWorkloadManifests(options())];
    for (const object of objects) {
      expect(object.metadata.labels).toMatchObject({
        "app.kubernetes.io/managed-by": "ring0",
        "ring0.dev/tenant": "acme",
      });
      if (object.kind !== "Namespace") expect(object.metadata.namespace).toBe("ring0-cp-acme");
    }
    expect(namespaceManifest("acme").metadata.labels).toMatchObject({
      "ring0.dev/control-plane": "kubernetes",
    });
  });

  it("runs the images of the spec's version", () => {
    const objects = controlPlaneWorkloadManifests(options({ version: "1.36.4" }));
    const image = (kind: string, name: string) =>
      find(objects, kind, name).spec.template.spec.containers[0]?.image;
    expect(image("Deployment", "kube-apiserver")).toBe("registry.k8s.io/kube-apiserver:v1.36.4");
    expect(image("Deployment", "kube-controller-manager")).toBe(
      "registry.k8s.io/kube-controller-manager:v1.36.4",
    );
    expect(image("StatefulSet", "etcd")).toBe(`registry.k8s.io/etcd:${defaultImages.etcdTag}`);
    const mirrored = controlPlaneWorkloadManifests(
      options({ images: { registry: "mirror.example/k8s", etcdTag: "3.6.8-0" } }),
    );
    expect(find(mirrored, "Deployment", "kube-apiserver").spec.template.spec.containers[0]?.image).toBe(
      "mirror.example/k8s/kube-apiserver:v1.36.4",
    );
  });

  it("runs every component with the GOGC it is given (etcd only on a volume), and Go's default without one", () => {
    const envOf = (objects: KubeObject[], kind: string, name: string) =>
      (
        find(objects, kind, name).spec.template.spec.containers[0] as {
          env?: { name: string; value?: string }[];
        }
      ).env ?? [];
    const volume = { kind: "persistentVolumeClaim", size: "2Gi" } as const;
    const tuned = controlPlaneWorkloadManifests(options({ goGc: 25, etcdStorage: volume }));
    for (const [kind, name] of [
      ["Deployment", "kube-apiserver"],
      ["Deployment", "kube-controller-manager"],
      ["StatefulSet", "etcd"],
    ] as const) {
      expect(envOf(tuned, kind, name)).toContainEqual({ name: "GOGC", value: "25" });
      expect(
        envOf(controlPlaneWorkloadManifests(options()), kind, name).map((env) => env.name),
      ).not.toContain("GOGC");
    }
    // An etcd on an emptyDir is never rolled for it: its data would go.
    expect(envOf(controlPlaneWorkloadManifests(options({ goGc: 25 })), "StatefulSet", "etcd")).toEqual([]);
    // The API server keeps its own variable beside it.
    expect(envOf(tuned, "Deployment", "kube-apiserver").map((env) => env.name)).toEqual(["POD_IP", "GOGC"]);
  });

  it("configures the API server: RBAC, service-account issuer, etcd by its Service's cluster IP, port 6443", () => {
    const args = find(controlPlaneWorkloadManifests(options()), "Deployment", "kube-apiserver").spec.template
      .spec.containers[0]?.args;
    expect(args).toEqual(
      expect.arrayContaining([
        "--authorization-mode=Node,RBAC",
        "--secure-port=6443",
        "--service-account-issuer=https://kube-apiserver.ring0-cp-acme.svc:6443",
        "--etcd-servers=https://10.0.0.11:2379",
      ]),
    );
  });

  it("asks Ring0's authorization webhook after RBAC when its kubeconfig is in the kubelet-client Secret", () => {
    const args = (overrides: Partial<ControlPlaneManifestOptions>) =>
      find(controlPlaneWorkloadManifests(options(overrides)), "Deployment", "kube-apiserver").spec.template
        .spec.containers[0]?.args ?? [];
    const withWebhook = args({ kubeletClient: true, authorizationWebhook: true });
    expect(withWebhook).toEqual(
      expect.arrayContaining([
        "--authorization-mode=Node,RBAC,Webhook",
        `--authorization-webhook-config-file=/etc/kubernetes/kubelet-client/${kubeletClientFiles.authorizationKubeconfig}`,
        "--authorization-webhook-version=v1",
        "--authorization-webhook-cache-unauthorized-ttl=10s",
      ]),
    );
    expect(withWebhook.filter((arg) => arg.startsWith("--authorization-mode="))).toHaveLength(1);
    // Without a client certificate (the webhook knows the API server by it) or an address: RBAC only.
    for (const without of [args({ kubeletClient: true }), args({ authorizationWebhook: true })]) {
      expect(without).toContain("--authorization-mode=Node,RBAC");
      expect(without.join(" ")).not.toContain("authorization-webhook");
    }
    // Its kubeconfig: the webhook's URL, verified by the vn-agent CA, with the API server's certificate.
    const kubeconfig = JSON.parse(authorizationKubeconfig("https://10.0.0.9:9443/authorize")) as {
      clusters: { cluster: { server: string; "certificate-authority": string } }[];
      users: { user: Record<string, string> }[];
    };
    expect(kubeconfig.clusters[0]?.cluster).toEqual({
      server: "https://10.0.0.9:9443/authorize",
      "certificate-authority": `/etc/kubernetes/kubelet-client/${kubeletClientFiles.ca}`,
    });
    expect(kubeconfig.users[0]?.user).toEqual({
      "client-certificate": `/etc/kubernetes/kubelet-client/${kubeletClientFiles.cert}`,
      "client-key": `/etc/kubernetes/kubelet-client/${kubeletClientFiles.key}`,
    });
  });

  it("runs one replica of each component", () => {
    const objects = controlPlaneWorkloadManifests(options());
    expect(find(objects, "StatefulSet", "etcd").spec.replicas).toBe(1);
    expect(find(objects, "Deployment", "kube-apiserver").spec.replicas).toBe(1);
    expect(find(objects, "Deployment", "kube-controller-manager").spec.replicas).toBe(1);
  });

  it("scales to 0 when suspended; etcd too when its data is on a volume claim", () => {
    const claimed = controlPlaneWorkloadManifests(
      options({ suspended: true, etcdStorage: { kind: "persistentVolumeClaim", size: "10Gi" } }),
    );
    expect(find(claimed, "StatefulSet", "etcd").spec.replicas).toBe(0);
    expect(find(claimed, "StatefulSet", "etcd").spec.volumeClaimTemplates).toHaveLength(1);
    expect(find(claimed, "Deployment", "kube-apiserver").spec.replicas).toBe(0);
    expect(find(claimed, "Deployment", "kube-controller-manager").spec.replicas).toBe(0);
  });

  it("keeps an emptyDir etcd running when suspended, so its data survives", () => {
    const objects = controlPlaneWorkloadManifests(options({ suspended: true }));
    const etcd = find(objects, "StatefulSet", "etcd");
    expect(etcd.spec.replicas).toBe(1);
    expect(etcd.spec.template.spec.volumes.find((volume) => volume.name === "data")?.emptyDir).toEqual({});
    expect(find(objects, "Deployment", "kube-apiserver").spec.replicas).toBe(0);
  });

  it("rolls a component's pods when what it mounts changes, and no other's", () => {
    const annotations = (files: Record<string, string>) => {
      const objects = controlPlaneWorkloadManifests(
        options({ secretFiles: { [PKI_SECRET]: { ...options().secretFiles[PKI_SECRET], ...files } } }),
      );
      return Object.fromEntries(
        (
          [
            ["StatefulSet", "etcd"],
            ["Deployment", "kube-apiserver"],
            ["Deployment", "kube-controller-manager"],
          ] as const
        ).map(([kind, name]) => [name, find(objects, kind, name).spec.template.metadata.annotations]),
      );
    };
    const before = annotations({});
    expect(before.etcd?.["ring0.dev/pki-checksum"]).toMatch(/^[0-9a-f]{16}$/);
    // The API server's own certificate: only the API server rolls.
    const apiserver = annotations({ [pkiFiles.apiserverCert]: "renewed" });
    expect(apiserver["kube-apiserver"]).not.toEqual(before["kube-apiserver"]);
    expect(apiserver.etcd).toEqual(before.etcd);
    expect(apiserver["kube-controller-manager"]).toEqual(before["kube-controller-manager"]);
    // etcd's serving certificate: only etcd.
    const etcd = annotations({ [pkiFiles.etcdServerCert]: "renewed" });
    expect(etcd.etcd).not.toEqual(before.etcd);
    expect(etcd["kube-apiserver"]).toEqual(before["kube-apiserver"]);
    // The cluster CA: the API server and the controller manager (which signs with it), not etcd.
    const ca = annotations({ [pkiFiles.caCert]: "renewed" });
    expect(ca["kube-apiserver"]).not.toEqual(before["kube-apiserver"]);
    expect(ca["kube-controller-manager"]).not.toEqual(before["kube-controller-manager"]);
    expect(ca.etcd).toEqual(before.etcd);
    expect(pkiChecksum({ "a.crt": "1" })).not.toBe(pkiChecksum({ "a.crt": "2" }));
  });

  it("counts every key of a Secret mounted whole, and only the items of one mounted in part", () => {
    const spec = {
      volumes: [
        { name: "whole", secret: { secretName: "one" } },
        { name: "part", secret: { secretName: "two", items: [{ key: "b", path: "b" }] } },
        { name: "config", configMap: { name: "two" } },
      ],
    };
    expect(mountedSecretFiles(spec, { one: { x: "1", y: "2" }, two: { a: "3", b: "4" } })).toEqual({
      "one/x": "1",
      "one/y": "2",
      "two/b": "4",
    });
  });

  it("stores the PKI files base64-encoded in a Secret", () => {
    const secret = pkiSecretManifest("acme", { "ca.crt": "PEM" }) as KubeObject & {
      data: Record<string, string>;
    };
    expect(secret.metadata).toMatchObject({ name: "control-plane-pki", namespace: "ring0-cp-acme" });
    expect(Buffer.from(secret.data["ca.crt"] ?? "", "base64").toString()).toBe("PEM");
  });
});

describe("kubeconfigs", () => {
  it("renders one cluster, user and context with base64 credentials", () => {
    const text = renderKubeconfig({
      cluster: "acme",
      user: "ring0-admin",
      server: "https://kube-apiserver.ring0-cp-acme.svc:6443",
      ca: "CA",
      cert: "CERT",
      key: "KEY",
    });
    expect(text).toContain("server: https://kube-apiserver.ring0-cp-acme.svc:6443");
    expect(text).toContain(`certificate-authority-data: ${Buffer.from("CA").toString("base64")}`);
    expect(text).toContain(`client-certificate-data: ${Buffer.from("CERT").toString("base64")}`);
    expect(text).toContain(`client-key-data: ${Buffer.from("KEY").toString("base64")}`);
    expect(text).toContain("current-context: ring0-admin@acme");
  });

  it("gives the controller manager and Ring0's admin their own identities", () => {
    const server = controlPlaneUrl({ apiserver: "10.0.0.10", etcd: "10.0.0.11" });
    expect(server).toBe("https://10.0.0.10:6443");
    const secret = kubeconfigSecretManifest("acme", fakePki, server) as KubeObject & {
      data: Record<string, string>;
    };
    const decoded = (key: string) => Buffer.from(secret.data[key] ?? "", "base64").toString();
    expect(decoded("controller-manager.conf")).toContain(Buffer.from("CERT cm").toString("base64"));
    expect(decoded("controller-manager.conf")).toContain("user: system:kube-controller-manager");
    expect(decoded("admin.conf")).toContain(Buffer.from("CERT admin").toString("base64"));
    expect(decoded("admin.conf")).toContain("server: https://10.0.0.10:6443");
  });
});

describe("addresses: cluster IPs, no DNS", () => {
  it("gives etcd a headless Service for its StatefulSet and a cluster IP for the API server to dial", () => {
    const services = controlPlaneServiceManifests("acme") as (KubeObject & {
      spec: { clusterIP?: string; ports: { port: number }[] };
    })[];
    expect(services.map((service) => [service.metadata.name, service.spec.clusterIP ?? "auto"])).toEqual([
      ["etcd", "None"],
      ["etcd-client", "auto"],
      ["kube-apiserver", "auto"],
    ]);
    for (const service of services) expect(service.metadata.namespace).toBe("ring0-cp-acme");
  });

  it("names the Services' cluster IPs in the serving certificates, once known", () => {
    const before = controlPlanePkiNames("acme", "cluster.local");
    expect(before.apiserverIpAddresses).not.toContain("10.0.0.10");
    const names = controlPlanePkiNames("acme", "cluster.local", {
      apiserver: "10.0.0.10",
      etcd: "10.0.0.11",
    });
    expect(names.apiserverIpAddresses).toEqual([...before.apiserverIpAddresses, "10.0.0.10"]);
    expect(names.etcdIpAddresses).toContain("10.0.0.11");
    expect(names.etcdDnsNames).toContain("etcd-client.ring0-cp-acme.svc");
  });
});

describe("the walls of a control plane in pods", () => {
  const workloads = controlPlaneWorkloadManifests(options()) as Workload[];
  const container = (name: string) => {
    const workload = workloads.find((object) => object.kind !== "Service" && object.metadata.name === name);
    return workload?.spec.template.spec.containers[0] as unknown as {
      args: string[];
      ports?: { containerPort: number }[];
      readinessProbe?: { exec?: { command: string[] }; httpGet?: unknown };
    };
  };

  it("serves etcd only over TLS with client certificates; its metrics stay inside the pod", () => {
    const etcd = container("etcd");
    const urls = etcd.args.filter((arg) => /-urls=/.test(arg) && !arg.startsWith("--listen-metrics-urls"));
    expect(urls.filter((arg) => /^--(listen|advertise)-client-urls=/.test(arg))).toEqual([
      "--listen-client-urls=https://0.0.0.0:2379",
      expect.stringMatching(/^--advertise-client-urls=https:\/\//),
    ]);
    expect(etcd.args).toContain("--client-cert-auth=true");
    expect(etcd.args).toContain("--listen-metrics-urls=http://127.0.0.1:2381");
    expect(etcd.ports?.map((port) => port.containerPort)).toEqual([2379]);
    expect(etcd.readinessProbe?.exec?.command).toContain("endpoint");
    expect(etcd.readinessProbe?.httpGet).toBeUndefined();
  });

  it("admits to the API server only its control plane, the tenant's own pods and Ring0; to the controller manager nothing", () => {
    const policies = controlPlaneWorkloadManifests(options()).filter(
      (object) => object.kind === "NetworkPolicy",
    ) as (KubeObject & {
      spec: { podSelector: unknown; ingress?: { from: unknown[]; ports: unknown[] }[] };
    })[];
    const byName = Object.fromEntries(policies.map((policy) => [policy.metadata.name, policy.spec]));
    expect(Object.keys(byName).sort()).toEqual([
      "etcd-clients",
      "kube-apiserver-clients",
      "kube-controller-manager-isolated",
    ]);
    expect(byName["kube-apiserver-clients"]?.ingress).toEqual([
      {
        from: [
          { podSelector: {} },
          { namespaceSelector: { matchLabels: { "ring0.dev/tenant": "acme", "ring0.dev/synced": "true" } } },
          { namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "ring0-system" } } },
        ],
        ports: [{ port: 6443, protocol: "TCP" }],
      },
    ]);
    expect(byName["kube-controller-manager-isolated"]?.ingress).toBeUndefined();
  });

  it("authenticates anonymous API requests only on health endpoints", () => {
    const apiserver = container("kube-apiserver");
    expect(apiserver.args).toContain(
      "--authentication-config=/etc/kubernetes/authentication/authentication-config.yaml",
    );
    expect(apiserver.args.some((arg) => arg.startsWith("--anonymous-auth"))).toBe(false);
    const configMap = controlPlaneWorkloadManifests(options()).find(
      (object) => object.kind === "ConfigMap",
    ) as (KubeObject & { data: Record<string, string> }) | undefined;
    expect(configMap?.data["authentication-config.yaml"]).toMatch(/conditions:\n(\s+- path: \/\w+\n){4}/);
  });
});
