import { describe, expect, it } from "vitest";
import { syncAnnotations, syncLabels } from "./contracts";
import { defaultIsolationPolicy, parseIsolationPolicy } from "./isolation-schema";
import { superNamespace } from "./naming";
import { namespaceLabelsBelow } from "./network-policies";
import { podSecurityLabels } from "./pod-security";
import {
  resizePatch,
  superEphemeralContainers,
  superPodSpec,
  withImmutableOfRunning,
} from "./super-pod-spec";
import { isSynced, malformedReason, maxObjectBytes, type TenantObject } from "./synced-kinds";
import { superObject, syncHashOf, withSyncHash, writtenBySyncer } from "./translate";
import { podStatusPatch, serviceStatusPatch, tenantPodStatus } from "./upward-status";
import { vNodeContent, vNodeStatus } from "./vnode-content";

const tenantPod: TenantObject = {
  apiVersion: "v1",
  kind: "Pod",
  metadata: {
    name: "web",
    namespace: "team",
    uid: "uid-1",
    labels: { app: "web" },
    annotations: { note: "hi", "kubectl.kubernetes.io/last-applied-configuration": "{}" },
    ownerReferences: [{ apiVersion: "apps/v1", kind: "ReplicaSet", name: "web-1", uid: "rs" }],
    finalizers: ["example.com/keep"],
  },
  spec: {
    nodeName: "kwok-node-0",
    serviceAccountName: "builder",
    priorityClassName: "high",
    priority: 1000,
    containers: [
      {
        name: "main",
        image: "nginx",
        volumeMounts: [
          { name: "data", mountPath: "/data" },
          { name: "kube-api-access-abcde", mountPath: "/var/run/secrets/kubernetes.io/serviceaccount" },
        ],
      },
    ],
    volumes: [
      { name: "data", emptyDir: {} },
      {
        name: "kube-api-access-abcde",
        projected: {
          sources: [{ serviceAccountToken: { path: "token" } }, { configMap: { name: "kube-root-ca.crt" } }],
        },
      },
    ],
  },
};

describe("downward translation", () => {
  it("puts a pod in the tenant's super namespace with the sync labels and annotations, without owners or finalizers", () => {
    const copy = superObject("acme", "pod", tenantPod);
    expect(copy.metadata.namespace).toBe(superNamespace("acme", "team"));
    expect(copy.metadata.labels).toEqual({
      app: "web",
      [syncLabels.tenant]: "acme",
      [syncLabels.managed]: "true",
    });
    // Unprefixed annotations (the user's own) go below; prefixed ones only if allow-listed.
    expect(copy.metadata.annotations).toEqual({
      note: "hi",
      [syncAnnotations.namespace]: "team",
      [syncAnnotations.name]: "web",
      [syncAnnotations.uid]: "uid-1",
    });
    expect(copy.metadata.ownerReferences).toBeUndefined();
    expect(copy.metadata.finalizers).toBeUndefined();
  });

  it("drops the tenant's token volume, its node and its priority class; keeps the rest", () => {
    const spec = superPodSpec(tenantPod.spec ?? {});
    expect(spec.volumes).toEqual([{ name: "data", emptyDir: {} }]);
    expect((spec.containers as { volumeMounts: unknown }[])[0]?.volumeMounts).toEqual([
      { name: "data", mountPath: "/data" },
    ]);
    expect(spec.nodeName).toBeUndefined();
    expect(spec.priorityClassName).toBeUndefined();
    expect(spec.priority).toBeUndefined();
    expect(spec.serviceAccountName).toBe("builder");
  });

  it("mounts no service-account token of the super cluster, whatever the tenant asked", () => {
    expect(superPodSpec(tenantPod.spec ?? {}).automountServiceAccountToken).toBe(false);
    const asked = superPodSpec({ ...tenantPod.spec, automountServiceAccountToken: true });
    expect(asked.automountServiceAccountToken).toBe(false);
    // A token volume the tenant wrote itself goes too, with its mounts (the super cluster would mint it).
    const written = superPodSpec({
      containers: [
        { name: "main", image: "vault", volumeMounts: [{ name: "vault-token", mountPath: "/vault" }] },
      ],
      volumes: [
        {
          name: "vault-token",
          projected: { sources: [{ serviceAccountToken: { audience: "vault", path: "token" } }] },
        },
      ],
    });
    expect(written.volumes).toBeUndefined();
    expect((written.containers as { volumeMounts?: unknown }[])[0]?.volumeMounts).toBeUndefined();
  });

  it("writes capability and sysctl names the way the super cluster's Pod Security admission reads them", () => {
    const spec = superPodSpec({
      securityContext: { sysctls: [{ name: "net/ipv4/tcp_syncookies", value: "1" }] },
      containers: [
        {
          name: "main",
          image: "nginx",
          securityContext: { capabilities: { add: ["cap_net_bind_service"], drop: ["all"] } },
        },
      ],
      initContainers: [{ name: "setup", image: "busybox" }],
    });
    expect((spec.securityContext as { sysctls: unknown }).sysctls).toEqual([
      { name: "net.ipv4.tcp_syncookies", value: "1" },
    ]);
    expect(spec.containers).toEqual([
      {
        name: "main",
        image: "nginx",
        securityContext: { capabilities: { add: ["NET_BIND_SERVICE"], drop: ["ALL"] } },
      },
    ]);
    // Containers that keep the runtime's default capabilities lose NET_RAW (no forged frames on
    // the shared bridge); one that adds it (the operator allowed it) keeps it.
    expect(spec.initContainers).toEqual([
      { name: "setup", image: "busybox", securityContext: { capabilities: { drop: ["NET_RAW"] } } },
    ]);
    const raw = superPodSpec({
      containers: [
        { name: "a", image: "x", securityContext: { runAsUser: 1, capabilities: { drop: ["CHOWN"] } } },
        { name: "b", image: "x", securityContext: { capabilities: { add: ["cap_net_raw"] } } },
      ],
    });
    expect(raw.containers).toEqual([
      {
        name: "a",
        image: "x",
        securityContext: { runAsUser: 1, capabilities: { drop: ["CHOWN", "NET_RAW"] } },
      },
      { name: "b", image: "x", securityContext: { capabilities: { add: ["NET_RAW"] } } },
    ]);
  });

  it("merges the operator's placement policy", () => {
    const spec = superPodSpec(
      { containers: [], nodeSelector: { disk: "ssd" }, tolerations: [{ key: "a", operator: "Exists" }] },
      { nodeSelector: { pool: "tenants" }, tolerations: [{ key: "tenants", operator: "Exists" }] },
    );
    expect(spec.nodeSelector).toEqual({ disk: "ssd", pool: "tenants" });
    expect(spec.tolerations).toEqual([
      { key: "a", operator: "Exists" },
      { key: "tenants", operator: "Exists" },
    ]);
  });

  it("never lets a tenant's labels override Ring0's, nor pass Ring0's or kwok's keys below", () => {
    const sneaky: TenantObject = {
      ...tenantPod,
      metadata: {
        ...tenantPod.metadata,
        labels: {
          app: "web",
          [syncLabels.tenant]: "globex",
          [syncLabels.managed]: "false",
          "ring0.dev/kwok-exec": "true",
          "stage.kwok.x-k8s.io/fast": "true",
          "app.kubernetes.io/name": "web",
        },
        annotations: {
          [syncAnnotations.uid]: "someone-else",
          "ring0.dev/sync-hash": "0",
          "kwok.x-k8s.io/node": "fake",
          "pod-complete.stage.kwok.x-k8s.io/delay": "1s",
          "k8s.v1.cni.cncf.io/networks": "kube-system/host-net",
          "example.com/owner": "team-a",
        },
      },
    };
    const copy = superObject("acme", "pod", sneaky, {
      podLabels: { "ring0.dev/kwok-exec": "false", tier: "below" },
    });
    expect(copy.metadata.labels).toEqual({
      app: "web",
      "app.kubernetes.io/name": "web",
      "ring0.dev/kwok-exec": "false",
      tier: "below",
      [syncLabels.tenant]: "acme",
      [syncLabels.managed]: "true",
    });
    expect(copy.metadata.annotations).toEqual({
      [syncAnnotations.namespace]: "team",
      [syncAnnotations.name]: "web",
      [syncAnnotations.uid]: "uid-1",
    });
    // An operator may let some annotations through, never Ring0's, kwok's or Kubernetes' own.
    const policy = parseIsolationPolicy({ podAnnotations: ["example.com/*"] });
    const allowed = superObject(
      "acme",
      "pod",
      sneaky,
      {},
      { ...policy, podAnnotations: ["example.com/*", "kwok.x-k8s.io/*"] },
    );
    expect(allowed.metadata.annotations).toEqual({
      "example.com/owner": "team-a",
      [syncAnnotations.namespace]: "team",
      [syncAnnotations.name]: "web",
      [syncAnnotations.uid]: "uid-1",
    });
    // The operator's labels beat the tenant's: a tenant label of the same key loses.
    const tenantTier = { ...sneaky, metadata: { ...sneaky.metadata, labels: { tier: "mine" } } };
    expect(
      superObject("acme", "pod", tenantTier, { podLabels: { tier: "below" } }).metadata.labels?.tier,
    ).toBe("below");
  });

  it("gives a super namespace Ring0's labels, the tenant's Pod Security level and its own labels only mirrored into Ring0's domain", () => {
    const namespace: TenantObject = {
      apiVersion: "v1",
      kind: "Namespace",
      metadata: {
        name: "team",
        uid: "ns-uid",
        labels: {
          "pod-security.kubernetes.io/enforce": "privileged",
          "kubernetes.io/metadata.name": "team",
          "istio-injection": "enabled",
          [syncLabels.tenant]: "globex",
          team: "a",
        },
        annotations: {
          "scheduler.alpha.kubernetes.io/node-selector": "pool=infra",
          "scheduler.alpha.kubernetes.io/defaultTolerations": '[{"operator":"Exists"}]',
          note: "hi",
        },
      },
    };
    const copy = superObject("acme", "namespace", namespace);
    expect(copy.metadata.name).toBe(superNamespace("acme", "team"));
    expect(copy.metadata.labels).toEqual({
      ...podSecurityLabels(defaultIsolationPolicy()),
      // For NetworkPolicies' namespace selectors (network-policies.ts); nothing else reads these keys.
      ...namespaceLabelsBelow(namespace.metadata.labels, "team"),
      [syncLabels.tenant]: "acme",
      [syncLabels.managed]: "true",
    });
    expect(
      Object.keys(copy.metadata.labels ?? {}).filter(
        (key) => !key.startsWith("ns.ring0.dev/") && !key.startsWith("pod-security.kubernetes.io/"),
      ),
    ).toEqual([syncLabels.tenant, syncLabels.managed]);
    expect(copy.metadata.labels?.["pod-security.kubernetes.io/enforce"]).toBe("baseline");
    expect(copy.metadata.annotations).toEqual({
      [syncAnnotations.namespace]: "team",
      [syncAnnotations.name]: "team",
      [syncAnnotations.uid]: "ns-uid",
    });

    const restricted = parseIsolationPolicy({ podSecurity: "restricted", namespaceLabels: ["team"] });
    const labels = superObject("acme", "namespace", namespace, {}, restricted).metadata.labels;
    expect(labels?.team).toBe("a");
    expect(labels?.["istio-injection"]).toBeUndefined();
    expect(labels?.["pod-security.kubernetes.io/enforce"]).toBe("restricted");
    expect(labels?.["pod-security.kubernetes.io/warn"]).toBe("restricted");
    // Even an allow-list object built in code cannot pass Pod Security or Ring0's labels.
    const careless = { ...restricted, namespaceLabels: ["pod-security.kubernetes.io/*", "ring0.dev/*"] };
    expect(superObject("acme", "namespace", namespace, {}, careless).metadata.labels).toEqual({
      ...podSecurityLabels(restricted),
      ...namespaceLabelsBelow(namespace.metadata.labels, "team"),
      [syncLabels.tenant]: "acme",
      [syncLabels.managed]: "true",
    });
  });

  it("copies other kinds' labels and annotations except Ring0's and kwok's keys", () => {
    const copy = superObject("acme", "service", {
      apiVersion: "v1",
      kind: "Service",
      metadata: {
        name: "api",
        namespace: "team",
        labels: { app: "api", [syncLabels.tenant]: "globex" },
        annotations: {
          "service.beta.kubernetes.io/aws-load-balancer-internal": "true",
          "ring0.dev/sync-hash": "0",
          "kubectl.kubernetes.io/last-applied-configuration": "{}",
        },
      },
      spec: { ports: [{ port: 80 }] },
    });
    expect(copy.metadata.labels).toEqual({
      app: "api",
      [syncLabels.tenant]: "acme",
      [syncLabels.managed]: "true",
    });
    expect(copy.metadata.annotations).toEqual({
      "service.beta.kubernetes.io/aws-load-balancer-internal": "true",
      [syncAnnotations.namespace]: "team",
      [syncAnnotations.name]: "api",
    });
  });

  it("asks below for the tenant's cluster IP, and lets the super cluster give node ports and other addresses", () => {
    const service = (spec: Record<string, unknown>) =>
      superObject("acme", "service", {
        apiVersion: "v1",
        kind: "Service",
        metadata: { name: "api", namespace: "team" },
        spec,
      }).spec;
    expect(
      service({
        clusterIP: "10.0.0.5",
        clusterIPs: ["10.0.0.5"],
        ipFamilies: ["IPv4"],
        type: "NodePort",
        externalIPs: ["10.244.0.9"],
        ports: [{ port: 80, nodePort: 30080 }],
      }),
    ).toEqual({ clusterIP: "10.0.0.5", type: "NodePort", ports: [{ port: 80 }] });
    // Headless stays headless (its DNS answers are its pods); an address outside the range is not asked for.
    expect(service({ clusterIP: "None", clusterIPs: ["None"], ports: [] })).toEqual({
      clusterIP: "None",
      ports: [],
    });
    expect(service({ clusterIP: "10.244.0.9", ports: [] })).toEqual({ ports: [] });
    expect(service({ clusterIP: "10.0.0.0", ports: [] })).toEqual({ ports: [] });
  });

  it("skips what the super cluster makes for itself, and endpoints of services with a selector", () => {
    const meta = (name: string) => ({ name, namespace: "team" });
    expect(
      isSynced("configmap", { apiVersion: "v1", kind: "ConfigMap", metadata: meta("kube-root-ca.crt") }),
    ).toBe(false);
    expect(
      isSynced("serviceaccount", { apiVersion: "v1", kind: "ServiceAccount", metadata: meta("default") }),
    ).toBe(false);
    expect(
      isSynced("secret", {
        apiVersion: "v1",
        kind: "Secret",
        metadata: meta("t"),
        type: "kubernetes.io/service-account-token",
      }),
    ).toBe(false);
    expect(
      isSynced("namespace", { apiVersion: "v1", kind: "Namespace", metadata: { name: "kube-node-lease" } }),
    ).toBe(false);
    const endpoints = { apiVersion: "v1", kind: "Endpoints", metadata: meta("api") };
    const selected = {
      apiVersion: "v1",
      kind: "Service",
      metadata: meta("api"),
      spec: { selector: { app: "a" } },
    };
    const manual = { apiVersion: "v1", kind: "Service", metadata: meta("api"), spec: {} };
    expect(isSynced("endpoints", endpoints, () => selected)).toBe(false);
    expect(isSynced("endpoints", endpoints, () => manual)).toBe(true);
    expect(isSynced("endpoints", endpoints, () => undefined)).toBe(false);
  });

  it("hashes what it applies, so an unchanged object is recognised", () => {
    const first = withSyncHash(superObject("acme", "pod", tenantPod));
    const again = withSyncHash(superObject("acme", "pod", structuredClone(tenantPod)));
    expect(syncHashOf(first)).toBe(syncHashOf(again));
    const changed = structuredClone(tenantPod);
    (changed.spec as { containers: { image: string }[] }).containers[0]!.image = "nginx:2";
    expect(syncHashOf(withSyncHash(superObject("acme", "pod", changed)))).not.toBe(syncHashOf(first));
    expect(writtenBySyncer("configmap", first, "acme")).toBe(true);
    expect(writtenBySyncer("pod", first, "globex")).toBe(false);
    const controllerMade = { ...first, metadata: { ...first.metadata, annotations: {} } };
    expect(writtenBySyncer("endpoints", controllerMade, "acme")).toBe(false);
  });

  it("refuses huge objects and pods without containers", () => {
    const huge = {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "big" },
      data: { x: "y".repeat(maxObjectBytes) },
    };
    expect(malformedReason("configmap", huge)).toMatch(/bytes/);
    expect(malformedReason("pod", { ...tenantPod, spec: { containers: [] } })).toMatch(/no containers/);
    expect(malformedReason("pod", tenantPod)).toBeNull();
  });
});

describe("upward translation", () => {
  it("patches the tenant pod's status to exactly what the super cluster reports", () => {
    const below = {
      phase: "Running",
      podIP: "10.0.0.9",
      podIPs: [{ ip: "10.0.0.9" }],
      hostIP: "10.244.3.1",
      conditions: [{ type: "Ready", status: "True" }],
      qosClass: "BestEffort",
    };
    const above = {
      phase: "Pending",
      conditions: [{ type: "PodScheduled", status: "True" }],
      nominatedNodeName: "x",
    };
    expect(podStatusPatch(above, below)).toEqual({
      phase: "Running",
      podIP: "10.0.0.9",
      podIPs: [{ ip: "10.0.0.9" }],
      hostIP: "10.244.3.1",
      conditions: [{ type: "Ready", status: "True" }],
    });
    expect(podStatusPatch({ ...below }, below)).toBeNull();
    expect(podStatusPatch({ phase: "Running", message: "old" }, { phase: "Running" })).toEqual({
      message: null,
    });
  });

  it("makes a vNode of a super node: capacity, conditions, a localhost address and the vn-agent's port", () => {
    const superNode = {
      metadata: {
        name: "kwok-node-0",
        annotations: { "kwok.x-k8s.io/node": "fake" } as Record<string, string>,
        labels: {
          "kubernetes.io/hostname": "kwok-node-0",
          "topology.kubernetes.io/zone": "zone-a",
          "kwok.x-k8s.io/node": "fake",
        },
      },
      status: {
        capacity: { cpu: "32", pods: "110" },
        allocatable: { cpu: "32", pods: "110" },
        conditions: [
          {
            type: "Ready",
            status: "True",
            lastHeartbeatTime: "2026-01-01T00:00:00Z",
            lastTransitionTime: "2026-01-01T00:00:00Z",
          },
        ],
        nodeInfo: { kubeletVersion: "fake" },
        addresses: [{ type: "InternalIP", address: "10.244.3.1" }],
      },
    };
    const served = vNodeContent(superNode, 20250);
    expect(served.labels).toEqual({
      "ring0.dev/vnode": "true",
      "kubernetes.io/hostname": "kwok-node-0",
      "topology.kubernetes.io/zone": "zone-a",
    });
    expect(served.status.addresses).toEqual([{ type: "Hostname", address: "localhost" }]);
    expect(served.status.daemonEndpoints).toEqual({ kubeletEndpoint: { Port: 20250 } });
    // An API server in a pod reaches the agents at the pod API address instead.
    const inPod = vNodeContent(superNode, 20250, "10.244.255.1");
    expect(inPod.annotations["ring0.dev/vn-agent"]).toBe("10.244.255.1:20250");
    expect((inPod.status.addresses as { type: string; address: string }[])[0]).toEqual({
      type: "Hostname",
      address: "10.244.255.1",
    });
    expect(served.annotations["ring0.dev/vn-agent"]).toBe("localhost:20250");
    // Heartbeats change every time; they must not change what the syncer compares.
    const later = structuredClone(superNode);
    later.status.conditions[0]!.lastHeartbeatTime = "2026-01-01T00:05:00Z";
    expect(vNodeContent(later, 20250)).toEqual(served);

    const unserved = vNodeContent(superNode, undefined);
    expect(unserved.status.daemonEndpoints).toEqual({ kubeletEndpoint: { Port: 10250 } });
    expect(unserved.annotations["ring0.dev/vn-agent"]).toMatch(/^none: no vn-agent serves node kwok-node-0/);

    const status = vNodeStatus(served.status, "2026-02-02T00:00:00Z") as {
      conditions: { lastHeartbeatTime: string }[];
    };
    expect(status.conditions[0]?.lastHeartbeatTime).toBe("2026-02-02T00:00:00Z");

    // What a real kubelet declares it supports goes up as it is (the tenant's API server weighs it).
    const real = structuredClone(superNode) as typeof superNode & { status: Record<string, unknown> };
    real.metadata.annotations = {};
    real.status.features = { supplementalGroupsPolicy: true };
    real.status.declaredFeatures = ["InPlacePodVerticalScalingInitContainers"];
    expect(vNodeContent(real, 20250).status).toMatchObject({
      features: { supplementalGroupsPolicy: true },
      declaredFeatures: ["InPlacePodVerticalScalingInitContainers"],
    });
    expect(served.status).not.toHaveProperty("declaredFeatures");
    // A real kubelet's node shows its InternalIP beside localhost; a simulated one's never shows.
    expect(vNodeContent(real, 20250).status.addresses).toEqual([
      { type: "Hostname", address: "localhost" },
      { type: "InternalIP", address: "10.244.3.1" },
    ]);
    expect(served.status.addresses).toEqual([{ type: "Hostname", address: "localhost" }]);
  });
});

describe("service status upward", () => {
  const balanced = { loadBalancer: { ingress: [{ ip: "192.0.2.50", ipMode: "VIP" }] } };

  it("gives the tenant's service the load balancer reported below", () => {
    expect(serviceStatusPatch({}, balanced)).toEqual(balanced);
    expect(serviceStatusPatch(undefined, balanced)).toEqual(balanced);
  });

  it("replaces a different ingress whole", () => {
    const moved = { loadBalancer: { ingress: [{ hostname: "lb.example.com" }] } };
    expect(serviceStatusPatch(balanced, moved)).toEqual(moved);
  });

  it("removes the tenant's ingress when the super cluster reports none", () => {
    expect(serviceStatusPatch(balanced, { loadBalancer: {} })).toEqual({ loadBalancer: { ingress: null } });
    expect(serviceStatusPatch(balanced, undefined)).toEqual({ loadBalancer: { ingress: null } });
  });

  it("writes nothing when both agree, or neither has a load balancer", () => {
    expect(serviceStatusPatch(balanced, structuredClone(balanced))).toBeNull();
    expect(serviceStatusPatch({}, {})).toBeNull();
    expect(serviceStatusPatch({ loadBalancer: { ingress: [] } }, { loadBalancer: {} })).toBeNull();
  });

  it("copies only the load balancer, never the super cluster's conditions", () => {
    const below = { ...balanced, conditions: [{ type: "Ready", status: "True" }] };
    expect(serviceStatusPatch({}, below)).toEqual(balanced);
  });
});

describe("confineAffinity", () => {
  const term = (extra: Record<string, unknown>) => ({
    topologyKey: "kubernetes.io/hostname",
    labelSelector: { matchLabels: { app: "victim" } },
    ...extra,
  });
  const affinity = {
    nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [] } },
    podAntiAffinity: {
      requiredDuringSchedulingIgnoredDuringExecution: [
        term({ namespaceSelector: {} }),
        term({ namespaces: ["default", "other"] }),
      ],
      preferredDuringSchedulingIgnoredDuringExecution: [
        { weight: 10, podAffinityTerm: term({ namespaceSelector: { matchLabels: { team: "x" } } }) },
      ],
    },
  };

  it("never selects another tenant's pods or namespaces", () => {
    const spec = superPodSpec({ containers: [{ name: "app" }], affinity }, {}, "acme");
    const anti = (spec.affinity as typeof affinity).podAntiAffinity;
    const [everywhere, named] = anti.requiredDuringSchedulingIgnoredDuringExecution as Record<
      string,
      unknown
    >[];
    expect(everywhere?.namespaceSelector).toEqual({ matchLabels: { "ring0.dev/tenant": "acme" } });
    expect(named?.namespaces).toEqual([superNamespace("acme", "default"), superNamespace("acme", "other")]);
    for (const selected of [
      everywhere,
      named,
      anti.preferredDuringSchedulingIgnoredDuringExecution[0]?.podAffinityTerm,
    ]) {
      expect((selected as { labelSelector: unknown }).labelSelector).toEqual({
        matchLabels: { app: "victim" },
        matchExpressions: [{ key: "ring0.dev/tenant", operator: "In", values: ["acme"] }],
      });
    }
    expect((spec.affinity as typeof affinity).nodeAffinity).toEqual(affinity.nodeAffinity);
  });
});

describe("what changes a running pod below", () => {
  const tokenVolume = {
    name: "kube-api-access-x",
    projected: { sources: [{ serviceAccountToken: { path: "token" } }] },
  };

  it("translates ephemeral containers as the pod's others: no tenant token mount, canonical capabilities", () => {
    const spec = {
      volumes: [tokenVolume, { name: "data", emptyDir: {} }],
      containers: [{ name: "app", image: "app" }],
      ephemeralContainers: [
        {
          name: "debugger",
          image: "busybox",
          volumeMounts: [
            { name: "kube-api-access-x", mountPath: "/var/run/secrets/kubernetes.io/serviceaccount" },
            { name: "data", mountPath: "/data" },
          ],
          securityContext: { capabilities: { add: ["cap_sys_ptrace"] } },
        },
      ],
    };
    expect(superEphemeralContainers(spec)).toEqual([
      {
        name: "debugger",
        image: "busybox",
        volumeMounts: [{ name: "data", mountPath: "/data" }],
        securityContext: { capabilities: { add: ["SYS_PTRACE"], drop: ["NET_RAW"] } },
      },
    ]);
    expect(superEphemeralContainers({ containers: [] })).toEqual([]);
    // The pod itself never carries them below: the subresource adds them.
    expect(superPodSpec(spec).ephemeralContainers).toBeUndefined();
    // Nor its runtime class's overhead: the class below (the one the filter allowed) sets its own.
    expect(
      superPodSpec({ ...spec, runtimeClassName: "gvisor", overhead: { cpu: "10m" } }),
    ).not.toHaveProperty("overhead");
    expect(superPodSpec({ ...spec, runtimeClassName: "gvisor" })).not.toHaveProperty("runtimeClassName");
    expect(
      superPodSpec(
        { ...spec, runtimeClassName: "x", overhead: { cpu: "1" } },
        {},
        "acme",
        "u",
        "ring0-gvisor",
      ),
    ).toMatchObject({ runtimeClassName: "ring0-gvisor" });
  });

  it("keeps a running copy's runtime class and containers' security contexts (changes below would be refused)", () => {
    const below = {
      containers: [{ name: "web", image: "nginx:1", securityContext: { runAsUser: 1 } }],
      initContainers: [{ name: "init", image: "busybox" }],
    };
    const desired = superPodSpec(
      {
        containers: [
          { name: "web", image: "nginx:2", securityContext: { runAsUser: 1 } },
          { name: "new", image: "x" },
        ],
        initContainers: [{ name: "init", image: "busybox" }],
        tolerations: [{ key: "a", operator: "Exists" }],
      },
      {},
      "acme",
      "uid",
      "ring0-gvisor",
    );
    expect(withImmutableOfRunning(desired, below)).toEqual({
      ...desired,
      runtimeClassName: undefined,
      // The image and tolerations change; what Kubernetes fixes at creation stays as it runs.
      containers: [
        { name: "web", image: "nginx:2", securityContext: { runAsUser: 1 } },
        { name: "new", image: "x", securityContext: { capabilities: { drop: ["NET_RAW"] } } },
      ],
      initContainers: [{ name: "init", image: "busybox" }],
    });
    expect(withImmutableOfRunning(desired, below)).not.toHaveProperty("runtimeClassName");
    expect(
      withImmutableOfRunning(desired, { ...below, runtimeClassName: "ring0-gvisor" }).runtimeClassName,
    ).toBe("ring0-gvisor");
  });

  it("lets the Downward API read the tenant's namespace and uid, not the copy's", () => {
    const ref = (fieldPath: string) => ({ fieldRef: { apiVersion: "v1", fieldPath } });
    const spec = superPodSpec({
      containers: [
        {
          name: "app",
          env: [
            { name: "NS", valueFrom: ref("metadata.namespace") },
            { name: "UID", valueFrom: ref("metadata.uid") },
            { name: "NAME", valueFrom: ref("metadata.name") },
            { name: "PLAIN", value: "x" },
          ],
        },
      ],
      volumes: [
        { name: "info", downwardAPI: { items: [{ path: "ns", ...ref("metadata.namespace") }] } },
        {
          name: "all",
          projected: { sources: [{ downwardAPI: { items: [{ path: "uid", ...ref("metadata.uid") }] } }] },
        },
      ],
    }) as {
      containers: { env: { valueFrom?: { fieldRef: { fieldPath: string } } }[] }[];
      volumes: {
        downwardAPI?: { items: { fieldRef: { fieldPath: string } }[] };
        projected?: { sources: { downwardAPI: { items: { fieldRef: { fieldPath: string } }[] } }[] };
      }[];
    };
    const paths = spec.containers[0]?.env.map((variable) => variable.valueFrom?.fieldRef.fieldPath);
    expect(paths).toEqual([
      "metadata.annotations['ring0.dev/tenant-namespace']",
      "metadata.annotations['ring0.dev/tenant-uid']",
      "metadata.name",
      undefined,
    ]);
    expect(spec.volumes[0]?.downwardAPI?.items[0]?.fieldRef.fieldPath).toBe(
      "metadata.annotations['ring0.dev/tenant-namespace']",
    );
    expect(spec.volumes[1]?.projected?.sources[0]?.downwardAPI.items[0]?.fieldRef.fieldPath).toBe(
      "metadata.annotations['ring0.dev/tenant-uid']",
    );
    // Those annotations are on every pod below, with the tenant's values.
    const below = superObject("acme", "pod", {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "p", namespace: "team", uid: "tenant-uid" },
      spec: { containers: [] },
    });
    expect(below.metadata.annotations).toMatchObject({
      [syncAnnotations.namespace]: "team",
      [syncAnnotations.uid]: "tenant-uid",
    });
  });

  it("resizes only the containers whose resources the tenant changed", () => {
    const below = {
      containers: [
        { name: "a", resources: { requests: { cpu: "100m" } } },
        { name: "b", resources: { requests: { cpu: "100m" } } },
      ],
      initContainers: [{ name: "sidecar", restartPolicy: "Always", resources: {} }],
    };
    expect(resizePatch(below, below)).toBeNull();
    const desired = {
      containers: [
        { name: "a", resources: { requests: { cpu: "200m" }, limits: { cpu: "200m" } } },
        { name: "b", resources: { requests: { cpu: "100m" } } },
      ],
      initContainers: [
        { name: "sidecar", restartPolicy: "Always", resources: { requests: { memory: "64Mi" } } },
      ],
    };
    expect(resizePatch(desired, below)).toEqual({
      spec: {
        containers: [{ name: "a", resources: { requests: { cpu: "200m" }, limits: { cpu: "200m" } } }],
        initContainers: [{ name: "sidecar", resources: { requests: { memory: "64Mi" } } }],
      },
    });
  });

  it("tells observed generations up in the tenant's terms", () => {
    const status = {
      observedGeneration: 3,
      conditions: [
        { type: "Ready", status: "True", observedGeneration: 3 },
        { type: "PodScheduled", status: "True", observedGeneration: 1 },
        { type: "Other", status: "True" },
      ],
    };
    // Below at generation 3, written from tenant generation 7: caught up means 7.
    expect(tenantPodStatus(status, { superGeneration: 3, tenantGeneration: "7" })).toEqual({
      observedGeneration: 7,
      conditions: [
        { type: "Ready", status: "True", observedGeneration: 7 },
        { type: "PodScheduled", status: "True", observedGeneration: 5 },
        { type: "Other", status: "True" },
      ],
    });
    // Lagging never goes below 1, nor above the tenant's generation.
    expect(tenantPodStatus({ observedGeneration: 1 }, { superGeneration: 9, tenantGeneration: "2" })).toEqual(
      { observedGeneration: 1 },
    );
    // Written by an older Ring0 (no annotation): nothing observed goes up.
    expect(tenantPodStatus(status, { superGeneration: 3 })).toEqual({
      conditions: [
        { type: "Ready", status: "True" },
        { type: "PodScheduled", status: "True" },
        { type: "Other", status: "True" },
      ],
    });
    // Ring0's own conditions it still stands by stay beside those from below.
    const isolation = { type: "ring0.dev/Isolation", status: "False", message: "no" };
    const below = { conditions: [{ type: "Ready", status: "True" }] };
    expect(podStatusPatch({ conditions: [...below.conditions, isolation] }, below, [isolation])).toBeNull();
    expect(podStatusPatch({ conditions: [...below.conditions, isolation] }, below)).toEqual({
      conditions: below.conditions,
    });
    const patch = podStatusPatch(
      { observedGeneration: 6 },
      tenantPodStatus({ observedGeneration: 3 }, { superGeneration: 3, tenantGeneration: "7" }),
    );
    expect(patch).toMatchObject({ observedGeneration: 7 });
  });

  it("annotates a pod below with the tenant generation it was written from", () => {
    const pod: TenantObject = {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "p", namespace: "default", uid: "u", generation: 4 } as TenantObject["metadata"],
      spec: { containers: [{ name: "c", image: "i" }] },
    };
    expect(superObject("acme", "pod", pod).metadata.annotations?.[syncAnnotations.generation]).toBe("4");
    const configMap: TenantObject = {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "c", namespace: "default", uid: "u", generation: 4 } as TenantObject["metadata"],
    };
    expect(superObject("acme", "configmap", configMap).metadata.annotations).not.toHaveProperty(
      syncAnnotations.generation,
    );
  });
});
