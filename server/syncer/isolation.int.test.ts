/**
 * The isolation filter and the metadata walls on real parts (issue 14, section 3): a real tenant
 * control plane, the run's local super cluster, the syncer. Every escaping pod spec is refused
 * with its rule and never appears below; the tenant's namespace labels and annotations do not leak
 * below while Ring0's Pod Security labels are there; a tenant held to "restricted" is held to it;
 * a toleration added to a running pod does not reach its copy; a tenant whose prefix collides
 * with an older tenant's is refused.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createObject, deleteObject, type KubeObject, readObject } from "@/server/k8s/apply";
import type { ClusterConnection } from "@/server/k8s/cluster";
import { installCrds } from "@/server/k8s/crds";
import { K8sError } from "@/server/k8s/errors";
import { listEventsFor } from "@/server/k8s/events";
import { eventually, testSuperCluster } from "@/server/k8s/test-cluster";
import { kubeRequest } from "@/server/k8s/transport";
import { createLogger } from "@/server/logger";
import { createLocalProvisioner } from "@/server/provisioners/local";
import type { Provisioner } from "@/server/provisioners/types";
import { tenantApiVersion, tenantKind } from "@/server/tenants/tenant-resources";
import { type IsolationRule, syncAnnotations, syncLabels } from "./contracts";
import { parseIsolationPolicy } from "./isolation-schema";
import { superNamespace, tenantPrefix } from "./naming";
import { createSyncer, type Syncer } from "./syncer";
import {
  type Obj,
  provisionerDirectory,
  readOrUndefined,
  ref,
  removeTenant,
  startTenants,
} from "./test-world";
import { isolationConditionType } from "./upward-status";

const logger = createLogger({ service: "isolation-it" }, "error");
const suffix = Date.now().toString(36).slice(-5);
const tenant = `iso-${suffix}`;
/** Two tenant names whose 40-bit prefixes collide (found by a birthday search; see naming.test.ts). */
const older = "collide-37er";
const younger = "collide-z9nw";
const ours = new Set([tenant, older, younger]);
const namespace = "team";

let superCluster: ClusterConnection;
let stateDir: string;
let provisioner: Provisioner;
let conn: ClusterConnection;
let syncer: Syncer | undefined;

const superNs = () => superNamespace(tenant, namespace);
const readBelow = (name: string) => readOrUndefined(superCluster, ref("Pod", name, superNs()));

type Spec = Record<string, unknown>;
const main = (extra: Spec = {}) => ({ name: "main", image: "nginx", ...extra });

function pod(name: string, spec: Spec = {}, metadata: Partial<KubeObject["metadata"]> = {}): KubeObject {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, namespace, labels: { app: name }, ...metadata },
    spec: { containers: [main()], terminationGracePeriodSeconds: 0, ...spec },
  };
}

interface Condition {
  type: string;
  status: string;
  reason: string;
  message: string;
}

/** The tenant pod's isolation condition, once the syncer has written one. */
async function refusal(name: string): Promise<Condition> {
  return eventually(async () => {
    const found = await readOrUndefined(conn, ref("Pod", name, namespace));
    const conditions = (found?.status?.conditions ?? []) as Condition[];
    return conditions.find((condition) => condition.type === isolationConditionType);
  }, 60_000);
}

async function listBelow(): Promise<Obj[]> {
  const list = await kubeRequest<{ items: Obj[] }>(superCluster, {
    path: `/api/v1/namespaces/${superNs()}/pods`,
    timeoutMs: 15_000,
  });
  return list.items;
}

async function patchTenant(name: string, body: Record<string, unknown>): Promise<void> {
  await kubeRequest(superCluster, {
    method: "PATCH",
    path: `/apis/${tenantApiVersion}/tenants/${name}`,
    contentType: "application/merge-patch+json",
    body,
  });
}

beforeAll(async () => {
  superCluster = testSuperCluster();
  // The Tenant CRD with spec.syncer.podSecurity (without it, the API server prunes the field).
  await installCrds(superCluster, logger);
  for (const leftover of [older, younger]) await removeTenant(superCluster, undefined, leftover);
  stateDir = fs.mkdtempSync(path.join(os.tmpdir(), "ring0-isolation-it-"));
  provisioner = createLocalProvisioner({ stateDir, logger });
  [conn] = (await startTenants(superCluster, provisioner, [tenant])) as [ClusterConnection];
  // A tenant admin writes whatever labels and annotations it likes on its own namespace.
  await createObject(conn, {
    ...ref("Namespace", namespace),
    metadata: {
      name: namespace,
      labels: {
        "pod-security.kubernetes.io/enforce": "privileged",
        "pod-security.kubernetes.io/warn": "privileged",
        [syncLabels.tenant]: "someone-else",
        "istio-injection": "enabled",
        team: "a",
      },
      annotations: {
        "scheduler.alpha.kubernetes.io/node-selector": "pool=infra",
        "scheduler.alpha.kubernetes.io/defaultTolerations": '[{"operator":"Exists"}]',
      },
    },
  });
  await eventually(() => readOrUndefined(conn, ref("ServiceAccount", "default", namespace)), 60_000);
  syncer = createSyncer({
    superCluster,
    directory: provisionerDirectory(ours, () => provisioner),
    logger,
    workers: 2,
    patrolIntervalMs: 2_000,
    heartbeatIntervalMs: 2_000,
    tenantRecheckMs: 1_000,
    tenantFilter: (name) => ours.has(name),
    // The operator lets the tenant's "team" label through, nothing else.
    isolationPolicy: parseIsolationPolicy({ namespaceLabels: ["team"] }),
  });
  await syncer.start();
}, 150_000);

afterAll(async () => {
  await syncer?.stop();
  for (const name of ours) await removeTenant(superCluster, provisioner, name);
  if (stateDir) fs.rmSync(stateDir, { recursive: true, force: true });
}, 120_000);

describe("the isolation filter on real parts", { timeout: 120_000 }, () => {
  it("runs a safe pod below with Ring0's labels, no tenant annotations and no super-cluster token", async () => {
    await createObject(conn, { ...ref("ConfigMap", "settings", namespace), data: { mode: "fast" } });
    await createObject(
      conn,
      pod(
        "safe",
        {
          securityContext: { seccompProfile: { type: "RuntimeDefault" } },
          containers: [
            main({
              livenessProbe: { httpGet: { path: "/healthz", port: 80 } },
              volumeMounts: [{ name: "settings", mountPath: "/etc/settings" }],
            }),
          ],
          volumes: [{ name: "settings", configMap: { name: "settings" } }],
        },
        {
          labels: { app: "safe", [syncLabels.tenant]: "someone-else", "ring0.dev/kwok-exec": "true" },
          annotations: { "kwok.x-k8s.io/node": "fake", "k8s.v1.cni.cncf.io/networks": "kube-system/host" },
        },
      ),
    );
    const below = await eventually(() => readBelow("safe"), 60_000);
    expect(below.metadata.labels).toMatchObject({
      app: "safe",
      [syncLabels.tenant]: tenant,
      [syncLabels.managed]: "true",
    });
    expect(below.metadata.labels?.["ring0.dev/kwok-exec"]).toBeUndefined();
    expect(below.metadata.annotations).toMatchObject({
      [syncAnnotations.namespace]: namespace,
      [syncAnnotations.name]: "safe",
    });
    expect(below.metadata.annotations?.["kwok.x-k8s.io/node"]).toBeUndefined();
    expect(below.metadata.annotations?.["k8s.v1.cni.cncf.io/networks"]).toBeUndefined();
    const spec = below.spec as {
      automountServiceAccountToken?: boolean;
      volumes?: { name: string }[];
      tolerations?: { key?: string }[];
    };
    expect(spec.automountServiceAccountToken).toBe(false);
    // The super cluster mounted no token: the only volume is the tenant's config map.
    expect(spec.volumes?.map((volume) => volume.name)).toEqual(["settings"]);
    // The tenant's API server added the default not-ready/unreachable tolerations; they pass.
    expect(spec.tolerations?.map((toleration) => toleration.key).sort()).toEqual([
      "node.kubernetes.io/not-ready",
      "node.kubernetes.io/unreachable",
    ]);
  });

  it("does not leak the tenant's namespace labels and annotations below; Ring0 sets the Pod Security labels", async () => {
    const below = await eventually(() => readOrUndefined(superCluster, ref("Namespace", superNs())), 60_000);
    expect(below.metadata.labels).toMatchObject({
      "pod-security.kubernetes.io/enforce": "baseline",
      "pod-security.kubernetes.io/warn": "baseline",
      "pod-security.kubernetes.io/audit": "baseline",
      [syncLabels.tenant]: tenant,
      [syncLabels.managed]: "true",
      team: "a",
    });
    expect(below.metadata.labels?.["istio-injection"]).toBeUndefined();
    expect(below.metadata.annotations?.["scheduler.alpha.kubernetes.io/node-selector"]).toBeUndefined();
    expect(below.metadata.annotations?.["scheduler.alpha.kubernetes.io/defaultTolerations"]).toBeUndefined();

    // A later change by the tenant carries the allow-listed label and never removes Ring0's.
    await kubeRequest(conn, {
      method: "PATCH",
      path: `/api/v1/namespaces/${namespace}`,
      contentType: "application/merge-patch+json",
      body: {
        metadata: {
          labels: {
            team: "b",
            "pod-security.kubernetes.io/enforce": "privileged",
            [syncLabels.managed]: null,
          },
        },
      },
    });
    const changed = await eventually(async () => {
      const found = await readOrUndefined(superCluster, ref("Namespace", superNs()));
      return found?.metadata.labels?.team === "b" ? found : undefined;
    }, 30_000);
    expect(changed.metadata.labels).toMatchObject({
      "pod-security.kubernetes.io/enforce": "baseline",
      [syncLabels.tenant]: tenant,
      [syncLabels.managed]: "true",
    });
  });

  it("refuses each escaping pod spec with its rule, and none of them appears in the super cluster", async () => {
    const escaping: [string, IsolationRule, KubeObject][] = [
      [
        "seccomp",
        "seccompProfile",
        pod("seccomp", { securityContext: { seccompProfile: { type: "Unconfined" } } }),
      ],
      [
        "seccomp-annotation",
        "seccompProfile",
        pod(
          "seccomp-annotation",
          {},
          { annotations: { "seccomp.security.alpha.kubernetes.io/pod": "unconfined" } },
        ),
      ],
      [
        "apparmor",
        "appArmorProfile",
        pod("apparmor", {
          containers: [main({ securityContext: { appArmorProfile: { type: "Unconfined" } } })],
        }),
      ],
      [
        "apparmor-annotation",
        "appArmorProfile",
        pod(
          "apparmor-annotation",
          {},
          { annotations: { "container.apparmor.security.beta.kubernetes.io/main": "unconfined" } },
        ),
      ],
      [
        "selinux",
        "seLinuxOptions",
        pod("selinux", { securityContext: { seLinuxOptions: { type: "spc_t" } } }),
      ],
      [
        "probe-host",
        "probeHost",
        pod("probe-host", {
          containers: [
            main({ livenessProbe: { httpGet: { host: "169.254.169.254", path: "/", port: 80 } } }),
          ],
        }),
      ],
      [
        "lifecycle-host",
        "probeHost",
        pod("lifecycle-host", {
          containers: [
            main({ lifecycle: { preStop: { httpGet: { host: "10.0.0.1", path: "/", port: 10250 } } } }),
          ],
        }),
      ],
      [
        "nfs",
        "volumes",
        pod("nfs", { volumes: [{ name: "share", nfs: { server: "192.0.2.1", path: "/exports" } }] }),
      ],
      [
        "git-repo",
        "volumes",
        pod("git-repo", { volumes: [{ name: "src", gitRepo: { repository: "https://example.com/x.git" } }] }),
      ],
      [
        "pre-bound",
        "volumes",
        pod("pre-bound", {
          volumes: [
            {
              name: "scratch",
              ephemeral: {
                volumeClaimTemplate: {
                  spec: {
                    accessModes: ["ReadWriteOnce"],
                    resources: { requests: { storage: "1Gi" } },
                    volumeName: "pv-of-another-tenant",
                  },
                },
              },
            },
          ],
        }),
      ],
      ["tolerate-all", "tolerations", pod("tolerate-all", { tolerations: [{ operator: "Exists" }] })],
      [
        "tolerate-operator",
        "tolerations",
        pod("tolerate-operator", {
          tolerations: [{ key: "dedicated", operator: "Equal", value: "infra", effect: "NoSchedule" }],
        }),
      ],
      [
        // The API server admits a Windows host process only with the node's network and on every container.
        "host-process",
        "windowsHostProcess",
        pod("host-process", {
          hostNetwork: true,
          os: { name: "windows" },
          securityContext: { windowsOptions: { hostProcess: true, runAsUserName: "NT AUTHORITY\\SYSTEM" } },
        }),
      ],
    ];
    for (const [, , manifest] of escaping) await createObject(conn, manifest);

    for (const [name, rule] of escaping) {
      const condition = await refusal(name);
      expect(condition, name).toMatchObject({ status: "False", reason: "IsolationViolation" });
      expect(condition.message, name).toMatch(new RegExp(`^Refused by [a-zA-Z, ]*\\b${rule}\\b`));
    }
    const events = await listEventsFor(conn, { kind: "Pod", name: "selinux", namespace });
    expect(events.find((event) => event.reason === "IsolationViolation")?.message).toContain("spc_t");

    // The patroller finds nothing to repair: none of them belongs below.
    await syncer?.patrol();
    const below = (await listBelow()).map((item) => item.metadata.name);
    for (const [name] of escaping) expect(below, name).not.toContain(name);
    expect(below).toContain("safe");
    for (const [name] of escaping) await deleteObject(conn, ref("Pod", name, namespace));
  });

  it("keeps a toleration added to a running pod from reaching its copy", async () => {
    await eventually(() => readBelow("safe"));
    await kubeRequest(conn, {
      method: "PATCH",
      path: `/api/v1/namespaces/${namespace}/pods/safe`,
      contentType: "application/json-patch+json",
      body: [{ op: "add", path: "/spec/tolerations/-", value: { operator: "Exists", effect: "NoExecute" } }],
    });
    const condition = await refusal("safe");
    expect(condition.message).toMatch(/^Refused by tolerations:/);
    const below = await eventually(() => readBelow("safe"));
    const tolerations = (below.spec as { tolerations?: { key?: string }[] }).tolerations ?? [];
    expect(tolerations.every((toleration) => toleration.key)).toBe(true);
  });

  it("holds a tenant whose Tenant says restricted to the restricted level, below too", async () => {
    await patchTenant(tenant, { spec: { syncer: { podSecurity: "restricted" } } });
    const labelled = await eventually(async () => {
      const found = await readOrUndefined(superCluster, ref("Namespace", superNs()));
      return found?.metadata.labels?.["pod-security.kubernetes.io/enforce"] === "restricted"
        ? found
        : undefined;
    }, 30_000);
    expect(labelled.metadata.labels?.["pod-security.kubernetes.io/warn"]).toBe("restricted");

    await createObject(conn, pod("root-by-default"));
    const condition = await refusal("root-by-default");
    for (const rule of ["allowPrivilegeEscalation", "capabilities", "runAsNonRoot", "seccompProfile"]) {
      expect(condition.message).toContain(rule);
    }
    await createObject(
      conn,
      pod("hardened", {
        securityContext: { runAsNonRoot: true, runAsUser: 101, seccompProfile: { type: "RuntimeDefault" } },
        containers: [
          main({ securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ["ALL"] } } }),
        ],
      }),
    );
    // The super cluster's own Pod Security admission, now enforcing restricted, admits it too…
    await eventually(() => readBelow("hardened"), 60_000);
    // …and is a second wall: a root pod written straight into the super namespace is refused.
    const direct = await kubeRequest(superCluster, {
      method: "POST",
      path: `/api/v1/namespaces/${superNs()}/pods`,
      query: { dryRun: "All" },
      body: pod("direct", {}, { namespace: superNs() }),
    }).catch((error: unknown) => error);
    expect(direct).toBeInstanceOf(K8sError);
    expect((direct as K8sError).message).toMatch(/violates PodSecurity "restricted:latest"/);
    await syncer?.patrol();
    expect(await readBelow("root-by-default")).toBeUndefined();
    await patchTenant(tenant, { spec: { syncer: { podSecurity: null } } });
    await eventually(async () => {
      const found = await readObject(superCluster, ref("Namespace", superNs()));
      return found.metadata.labels?.["pod-security.kubernetes.io/enforce"] === "baseline";
    }, 30_000);
  });

  it("refuses a tenant whose prefix collides with an older tenant's, naming both", async () => {
    expect(tenantPrefix(older)).toBe(tenantPrefix(younger));
    await createObject(superCluster, { ...ref(tenantKind, older, undefined, tenantApiVersion), spec: {} });
    // creationTimestamp has whole seconds: the younger tenant must be visibly younger.
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    await createObject(superCluster, { ...ref(tenantKind, younger, undefined, tenantApiVersion), spec: {} });
    const events = await eventually(async () => {
      const found = await listEventsFor(superCluster, { kind: tenantKind, name: younger });
      return found.some((event) => event.reason === "PrefixCollision") ? found : undefined;
    }, 30_000);
    const message = events.find((event) => event.reason === "PrefixCollision")?.message ?? "";
    expect(message).toContain(younger);
    expect(message).toContain(older);
    expect(message).toContain(tenantPrefix(older));
    const olderEvents = await listEventsFor(superCluster, { kind: tenantKind, name: older });
    expect(olderEvents.some((event) => event.reason === "PrefixCollision")).toBe(false);
    expect(syncer?.stats().queue[younger]).toBeUndefined();
  });
});
