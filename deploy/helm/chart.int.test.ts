/**
 * Ring0's Helm chart (deploy/helm/ring0), checked with the real helm (scripts/helm-build.sh) and the
 * run's super cluster: `helm lint`, the clear refusals of values.schema.json and the chart's own
 * checks, and every rendered object accepted by a real API server (`kubectl apply --dry-run=server`),
 * walled in as the chart promises (nonroot, read-only root, no wildcard rights).
 */

import { spawnSync } from "node:child_process";
import { X509Certificate } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { localSuperCluster } from "@/server/cluster/local";
import { run } from "@/server/cluster/process";
import {
  RING0_VN_AGENT_LABELS,
  RING0_VN_AGENT_POD_PORT,
  RING0_WEBHOOK_POD_PORT,
} from "@/server/cluster/real-node/ring0-pods";
import { serverSideApply } from "@/server/k8s/apply";
import { installCrds } from "@/server/k8s/crds";
import { testSuperCluster } from "@/server/k8s/test-cluster";
import { createLogger } from "@/server/logger";

const CHART = path.resolve("deploy/helm/ring0");
const REQUIRED = [
  "--set",
  "publicUrl=https://ring0.example.com",
  "--set",
  "database.url=postgresql://ring0:secret@db.example.com:5432/ring0",
  "--set",
  "oidc.issuer=https://idp.example.com",
  "--set",
  "oidc.clientId=ring0",
  "--set",
  "oidc.clientSecret=s3cret",
];
let helm = "";
let kubectl = "";
let work = "";

const toolEnv = () => ({ ...process.env, PATH: process.env.PATH ?? "", HOME: work, KUBECONFIG: "" });

function helmRun(args: string[]) {
  const result = spawnSync(helm, args, {
    env: toolEnv(),
    cwd: work,
    encoding: "utf8",
    maxBuffer: 64 * 1024 * 1024,
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

const template = (args: string[] = [], namespace = "ring0-system") =>
  helmRun(["template", "ring0", CHART, "--namespace", namespace, ...args]);

type Doc = { kind: string; metadata: { name: string }; [key: string]: unknown };
interface PodSpec {
  serviceAccountName?: string;
  securityContext: Record<string, unknown>;
  containers: {
    securityContext: Record<string, unknown>;
    readinessProbe: { httpGet: { path: string } };
    env: { name: string; value?: string }[];
    ports: { name: string; containerPort: number }[];
  }[];
}

beforeAll(async () => {
  work = fs.mkdtempSync(path.join(os.tmpdir(), "ring0-chart-"));
  const printed = await run("bash", ["scripts/helm-build.sh", "--print-dir"], { timeoutMs: 60_000 });
  helm = path.join(printed.stdout.trim().split("\n").pop() ?? "", "helm");
  kubectl = await localSuperCluster({
    stateDir: inject("superStateDir"),
    logger: createLogger({}, "warn"),
  }).kubectlPath();
  // Ring0's CRDs, as every Ring0 installs them at start (RBAC checks on them need them served).
  await installCrds(testSuperCluster(), createLogger({}, "warn"));
  await serverSideApply(testSuperCluster(), {
    apiVersion: "v1",
    kind: "Namespace",
    metadata: { name: "ring0-system" },
  });
}, 120_000);

afterAll(() => {
  fs.rmSync(work, { recursive: true, force: true });
});

describe("the Helm chart", () => {
  it("lints clean", () => {
    const lint = helmRun(["lint", CHART, "--strict", "--namespace", "ring0-system", ...REQUIRED]);
    expect(lint.stderr + lint.stdout).toContain("0 chart(s) failed");
    expect(lint.code).toBe(0);
  });

  it("refuses what it cannot run with, saying what to set", () => {
    const cases: [string[], string, RegExp][] = [
      [[], "ring0-system", /publicUrl is required/],
      [
        ["--set", "publicUrl=https://r.example.com"],
        "ring0-system",
        /database\.url or database\.existingSecret is required/,
      ],
      [REQUIRED.slice(0, 4), "ring0-system", /oidc\.issuer is required/],
      [REQUIRED, "default", /install Ring0 into the ring0-system namespace/],
      [[...REQUIRED, "--set", "replicaCount=0"], "ring0-system", /replicaCount.*minimum/],
      [[...REQUIRED, "--set", "database.url=mysql://x"], "ring0-system", /database\/url|database.*pattern/],
      [
        [...REQUIRED, "--set", "imagee.tag=1"],
        "ring0-system",
        /additional properties 'imagee' not allowed|imagee/,
      ],
      [
        [...REQUIRED, "--set", "ingress.enabled=true", "--set", "gatewayUrl=https://k8s.example.com"],
        "ring0-system",
        /ingress\.host is required/,
      ],
      [
        [...REQUIRED, "--set", "ingress.enabled=true", "--set", "ingress.host=ring0.example.com"],
        "ring0-system",
        /gatewayUrl is required with ingress\.enabled/,
      ],
      [
        [...REQUIRED, "--set", "replicaCount=1"],
        "ring0-system",
        /minAvailable must be lower than replicaCount/,
      ],
      [
        [...REQUIRED, "--set", "controlPlanes.etcdStorage.size=two-gigs"],
        "ring0-system",
        /etcdStorage.*size|size.*pattern/,
      ],
      [
        [...REQUIRED, "--set", "vnAgent.port=9443"],
        "ring0-system",
        /additional properties 'port' not allowed|port/,
      ],
      [[...REQUIRED, "--set", "vnAgent.kubeletCa=not a certificate"], "ring0-system", /kubeletCa/],
    ];
    for (const [args, namespace, message] of cases) {
      const rendered = template(args, namespace);
      expect(rendered.code, args.join(" ")).not.toBe(0);
      expect(rendered.stderr).toMatch(message);
    }
  });

  it("renders objects a real API server accepts, walled in as promised", () => {
    const rendered = template([
      ...REQUIRED,
      "--include-crds",
      "--set",
      "ingress.enabled=true",
      "--set",
      "ingress.host=ring0.example.com",
      "--set",
      "gatewayUrl=https://10.0.0.9:8443",
    ]);
    expect(rendered.stderr).toBe("");
    // Every object as the API server would store it (admission, defaults and schemas applied).
    const dryRun = spawnSync(
      kubectl,
      ["--kubeconfig", inject("superKubeconfig"), "apply", "--dry-run=server", "-o", "json", "-f", "-"],
      { input: rendered.stdout, encoding: "utf8", env: toolEnv(), maxBuffer: 64 * 1024 * 1024 },
    );
    // kubectl warns (only) that the CRDs Ring0 installed by server-side apply lack its annotation.
    expect(dryRun.stderr.split("\n").filter((line) => line && !line.startsWith("Warning: "))).toEqual([]);
    expect(dryRun.status).toBe(0);
    const docs = (JSON.parse(dryRun.stdout) as { items: Doc[] }).items;
    const kinds = docs.map((doc) => doc.kind).sort();
    for (const kind of [
      "Deployment",
      "DaemonSet",
      "Service",
      "Ingress",
      "PodDisruptionBudget",
      "ServiceAccount",
      "ClusterRole",
      "ClusterRoleBinding",
      "Role",
      "RoleBinding",
      "CustomResourceDefinition",
      "NetworkPolicy",
    ])
      expect(kinds).toContain(kind);

    const deployment = docs.find((doc) => doc.kind === "Deployment") as unknown as {
      spec: { replicas: number; template: { spec: PodSpec } };
    };
    expect(deployment.spec.replicas).toBe(2);
    const pod = deployment.spec.template.spec;
    expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 65532 });
    const container = pod.containers[0] as PodSpec["containers"][number];
    expect(container.securityContext).toMatchObject({
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ["ALL"] },
    });
    expect(container.readinessProbe.httpGet.path).toBe("/api/ready");
    const env = Object.fromEntries(
      (container.env as { name: string; value?: string }[]).map((entry) => [
        entry.name,
        entry.value ?? "(secret)",
      ]),
    );
    expect(env).toMatchObject({
      RING0_LISTEN_ADDRESS: "0.0.0.0",
      RING0_SUPER_CLUSTER: "in-cluster",
      RING0_DEFAULT_PROVISIONER: "kubernetes",
      RING0_ETCD_STORAGE_SIZE: "2Gi",
      DATABASE_URL: "(secret)",
      OIDC_CLIENT_SECRET: "(secret)",
      NEXTAUTH_SECRET: "(secret)",
    });
    // No secret value in the pod spec itself.
    expect(JSON.stringify(pod)).not.toContain("s3cret");

    // The webhooks: the container's port the tenant wall opens to API servers in pods, behind a
    // Service of their own that Ring0 is told of, inside the cluster only.
    const webhooksPort = container.ports.find((entry) => entry.name === "webhooks");
    expect(webhooksPort?.containerPort).toBe(RING0_WEBHOOK_POD_PORT);
    expect(env.RING0_WEBHOOK_PORT).toBe(String(RING0_WEBHOOK_POD_PORT));
    const webhooks = docs.find(
      (doc) => doc.kind === "Service" && doc.metadata.name === env.RING0_WEBHOOK_SERVICE,
    ) as unknown as { spec: { type: string; ports: { name: string; targetPort: string }[] } };
    expect(webhooks.spec.type).toBe("ClusterIP");
    expect(webhooks.spec.ports).toEqual([
      expect.objectContaining({ name: "webhooks", targetPort: "webhooks" }),
    ]);
    // Only tenant API servers in pods may open connections to the webhooks' port.
    const policy = docs.find((doc) => doc.kind === "NetworkPolicy") as unknown as {
      spec: { ingress: { from?: unknown[]; ports: { port: number }[] }[] };
    };
    const toWebhooks = policy.spec.ingress.filter((rule) =>
      rule.ports.some((port) => port.port === RING0_WEBHOOK_POD_PORT),
    );
    expect(toWebhooks).toEqual([
      {
        from: [
          {
            namespaceSelector: { matchLabels: { "ring0.dev/control-plane": "kubernetes" } },
            podSelector: {
              matchLabels: {
                "app.kubernetes.io/managed-by": "ring0",
                "app.kubernetes.io/name": "kube-apiserver",
              },
            },
          },
        ],
        ports: [{ port: RING0_WEBHOOK_POD_PORT, protocol: "TCP" }],
      },
    ]);
    // The vn-agents: a DaemonSet from Ring0's image, walled in like Ring0 (nonroot, read-only root,
    // no capabilities, never the host's network), labelled as the tenant wall knows them, on the
    // port it opens to API servers; and Ring0 is told that port.
    const daemonSet = docs.find((doc) => doc.kind === "DaemonSet") as unknown as {
      spec: {
        template: {
          metadata: { labels: Record<string, string> };
          spec: PodSpec & { hostNetwork?: boolean; serviceAccountName: string };
        };
      };
    };
    const agentPod = daemonSet.spec.template.spec;
    expect(daemonSet.spec.template.metadata.labels).toMatchObject(RING0_VN_AGENT_LABELS);
    expect(agentPod.hostNetwork ?? false).toBe(false);
    expect(agentPod.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 65532 });
    const agentContainer = agentPod.containers[0] as PodSpec["containers"][number] & { command: string[] };
    expect(agentContainer.command).toEqual([
      "/usr/local/bin/node",
      "--import",
      "tsx",
      "server/vn-agent/node-agent.ts",
    ]);
    expect(agentContainer.securityContext).toMatchObject({
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ["ALL"] },
    });
    expect(agentContainer.ports).toEqual([
      expect.objectContaining({ name: "vn-agent", containerPort: RING0_VN_AGENT_POD_PORT }),
    ]);
    expect(agentPod.serviceAccountName).not.toBe(pod.serviceAccountName);
    expect(env.RING0_VN_AGENT_PORT).toBe(String(RING0_VN_AGENT_POD_PORT));
    // Only tenant API servers in pods may open connections to an agent.
    const agentPolicy = docs.find(
      (doc) => doc.kind === "NetworkPolicy" && doc.metadata.name.endsWith("-vn-agent"),
    ) as unknown as { spec: { ingress: unknown[] } };
    expect(agentPolicy.spec.ingress).toEqual([
      { ...(toWebhooks[0] as object), ports: [{ port: RING0_VN_AGENT_POD_PORT, protocol: "TCP" }] },
    ]);
    // Without the DaemonSet Ring0 is not told of one.
    const without = template([...REQUIRED, "--set", "vnAgent.enabled=false"]);
    expect(without.stdout).not.toContain("kind: DaemonSet");
    expect(without.stdout).not.toContain("RING0_VN_AGENT_PORT");

    const exposed = template([...REQUIRED, "--set", "service.type=LoadBalancer"]);
    expect(exposed.stdout).toMatch(/name: ring0-webhooks\n[\s\S]*?type: ClusterIP/);

    // The gateway's certificate names the Service, and its CA ends the chain kubeconfigs embed.
    const tls = docs.find(
      (doc) => doc.kind === "Secret" && doc.metadata.name.endsWith("-gateway-tls"),
    ) as unknown as {
      data: Record<string, string>;
    };
    const chain = Buffer.from(tls.data["tls.crt"] as string, "base64").toString();
    const leaf = new X509Certificate(chain);
    expect(leaf.subjectAltName).toContain("DNS:ring0.ring0-system.svc");
    // An IP gateway host is an IP name: kubectl checks an IP only against those.
    expect(leaf.subjectAltName).toContain("IP Address:10.0.0.9");
    expect(leaf.subjectAltName).not.toContain("DNS:10.0.0.9");

    // Least privilege: no wildcard verb, resource or group anywhere.
    for (const role of docs.filter((doc) => doc.kind === "ClusterRole" || doc.kind === "Role")) {
      for (const rule of (role as unknown as { rules: Record<string, string[]>[] }).rules) {
        for (const field of ["verbs", "resources", "apiGroups"]) expect(rule[field] ?? []).not.toContain("*");
      }
    }
  });

  it("grants Ring0's service account what Ring0 does in the super cluster, and nothing it must not", () => {
    const release = `rbac-${Date.now().toString(36).slice(-5)}`;
    const account = `system:serviceaccount:ring0-system:${release}-ring0`;
    const rendered = helmRun([
      "template",
      release,
      CHART,
      "--namespace",
      "ring0-system",
      ...REQUIRED,
      "--show-only",
      "templates/rbac.yaml",
      "--show-only",
      "templates/serviceaccount.yaml",
      "--show-only",
      "templates/vn-agent.yaml",
    ]);
    expect(rendered.code, rendered.stderr).toBe(0);
    // The accounts and their rights only (no DaemonSet runs here).
    const rbacKinds = /^kind: (ServiceAccount|ClusterRole|ClusterRoleBinding|Role|RoleBinding)$/m;
    const rbac = rendered.stdout
      .split(/^---$/m)
      .filter((doc) => rbacKinds.test(doc))
      .join("\n---\n");
    const kubectlRun = (args: string[], input?: string) =>
      spawnSync(kubectl, ["--kubeconfig", inject("superKubeconfig"), ...args], {
        input,
        encoding: "utf8",
        env: toolEnv(),
      });
    const applied = kubectlRun(["apply", "-f", "-"], rbac);
    expect(applied.stderr).toBe("");
    try {
      const can = (args: string[]) => {
        const answer = kubectlRun(["auth", "can-i", ...args, "--as", account]);
        return answer.stdout.trim() === "yes"
          ? "yes"
          : `${answer.stdout.trim()} ${answer.stderr.trim()}`.trim();
      };
      // What Ring0 does (the audit in templates/rbac.yaml).
      for (const args of [
        ["create", "pods", "-n", "t0123abcd-default"],
        ["patch", "pods", "-n", "t0123abcd-default", "--subresource", "ephemeralcontainers"],
        ["get", "secrets", "-n", "ring0-cp-acme"],
        ["list", "secrets", "--all-namespaces"],
        ["create", "namespaces"],
        ["delete", "namespaces"],
        ["create", "pods", "-n", "any", "--subresource", "exec"],
        ["get", "nodes", "--subresource", "proxy"],
        ["watch", "tenants.ring0.dev"],
        ["update", "tenants.ring0.dev", "--subresource", "status"],
        ["patch", "customresourcedefinitions/tenants.ring0.dev"],
        ["create", "statefulsets.apps", "-n", "ring0-cp-acme"],
        ["create", "networkpolicies.networking.k8s.io", "-n", "t0123abcd-default"],
        ["create", "leases.coordination.k8s.io", "-n", "ring0-system"],
        ["update", "leases.coordination.k8s.io/ring0-controllers", "-n", "ring0-system"],
        ["create", "events", "-n", "default"],
      ]) {
        expect(can(args), args.join(" ")).toBe("yes");
      }
      // What it must never be able to do in the super cluster.
      for (const args of [
        ["create", "clusterroles.rbac.authorization.k8s.io"],
        ["create", "rolebindings.rbac.authorization.k8s.io", "-n", "kube-system"],
        ["escalate", "clusterroles.rbac.authorization.k8s.io"],
        ["bind", "clusterroles.rbac.authorization.k8s.io"],
        ["impersonate", "users"],
        ["create", "serviceaccounts", "-n", "kube-system", "--subresource", "token"],
        ["patch", "customresourcedefinitions/widgets.example.com"],
        ["delete", "customresourcedefinitions/tenants.ring0.dev"],
        ["update", "leases.coordination.k8s.io/kube-scheduler", "-n", "kube-system"],
        ["update", "leases.coordination.k8s.io/other", "-n", "ring0-system"],
        ["create", "events", "-n", "kube-system"],
        ["patch", "nodes"],
        ["delete", "persistentvolumes"],
        ["create", "validatingwebhookconfigurations.admissionregistration.k8s.io"],
        ["create", "certificatesigningrequests.certificates.k8s.io"],
      ]) {
        expect(can(args), args.join(" ")).toMatch(/^no/);
      }
      // The vn-agents read pods and nodes and reach the kubelets (the kubelet asks), and read the one
      // Secret Ring0 issues their certificates into; they write nothing and read no other Secret.
      const agent = `system:serviceaccount:ring0-system:${release}-ring0-vn-agent`;
      const agentCan = (args: string[]) =>
        kubectlRun(["auth", "can-i", ...args, "--as", agent]).stdout.trim() === "yes" ? "yes" : "no";
      for (const args of [
        ["get", "pods", "-n", "t0123abcd-default"],
        ["get", "nodes"],
        ["get", "nodes", "--subresource", "proxy"],
        ["create", "nodes", "--subresource", "proxy"],
        ["get", "secrets/ring0-vn-agent-serving", "-n", "ring0-system"],
      ])
        expect(agentCan(args), args.join(" ")).toBe("yes");
      for (const args of [
        ["get", "secrets/ring0-vn-agent-pki", "-n", "ring0-system"],
        ["list", "secrets", "-n", "ring0-system"],
        ["get", "secrets", "-n", "ring0-cp-acme"],
        ["list", "pods", "--all-namespaces"],
        ["create", "pods", "-n", "t0123abcd-default"],
        ["create", "pods", "-n", "any", "--subresource", "exec"],
        ["patch", "nodes"],
        ["update", "secrets/ring0-vn-agent-serving", "-n", "ring0-system"],
        ["create", "serviceaccounts", "-n", "ring0-system", "--subresource", "token"],
      ])
        expect(agentCan(args), args.join(" ")).toBe("no");
      // Ring0 itself renews the agents' certificates, in that Secret only.
      expect(can(["update", "secrets/ring0-vn-agent-serving", "-n", "ring0-system"])).toBe("yes");
      expect(can(["update", "secrets/other", "-n", "ring0-system"])).toMatch(/^no/);
    } finally {
      kubectlRun(["delete", "--ignore-not-found", "-f", "-"], rbac);
    }
  });
});
