import { describe, expect, it } from "vitest";
import type { V1Pod } from "@/server/k8s/kinds/node";
import type { IsolationPolicy, IsolationRule } from "./contracts";
import { checkPodIsolation } from "./filter";
import { runningPodPolicy, runtimeClassOf, tenantIsolationPolicy } from "./isolation-policy";
import {
  defaultIsolationPolicy,
  IsolationPolicyError,
  isolationRules,
  parseIsolationPolicy,
} from "./isolation-schema";
import { podSecurityLabels } from "./pod-security";

type Spec = NonNullable<V1Pod["spec"]>;
type Metadata = NonNullable<V1Pod["metadata"]>;
/** Tenant input as written: fields client-node's types do not know yet, or of the wrong shape. */
type Loose = Record<string, unknown>;
/** A container or volume client-node's types cannot express (e.g. a deprecated tcpSocket handler). */
const untyped = <T>(value: Loose | Loose[]): T => value as unknown as T;

/** A compliant pod: one nginx container, nothing that reaches the node. */
function pod(change: (spec: Spec, metadata: Metadata) => void = () => {}): V1Pod {
  const spec: Spec = { containers: [{ name: "web", image: "nginx", ports: [{ containerPort: 80 }] }] };
  const metadata: Metadata = { name: "web", namespace: "default" };
  change(spec, metadata);
  return { apiVersion: "v1", kind: "Pod", metadata, spec };
}

const web = (spec: Spec) => spec.containers[0]!;
const loose = (value: object) => value as Loose;

const restricted = (policy = defaultIsolationPolicy()): IsolationPolicy => ({
  ...policy,
  podSecurity: "restricted",
});

/** What the restricted level asks of every container, so a restricted case breaks one rule only. */
const hardened = { allowPrivilegeEscalation: false, capabilities: { drop: ["ALL"] } };
function restrictedPod(change: (spec: Spec, metadata: Metadata) => void = () => {}): V1Pod {
  return pod((spec, metadata) => {
    spec.securityContext = { runAsNonRoot: true, seccompProfile: { type: "RuntimeDefault" } };
    web(spec).securityContext = structuredClone(hardened);
    change(spec, metadata);
  });
}

function check(subject: V1Pod, policy = defaultIsolationPolicy()) {
  return checkPodIsolation(subject, policy);
}

const ruleAndField = (violations: { rule: string; field: string }[]) =>
  violations.map(({ rule, field }) => ({ rule, field }));

interface RuleCase {
  rule: IsolationRule;
  violating: (spec: Spec, metadata: Metadata) => void;
  field: string;
  compliant: (spec: Spec, metadata: Metadata) => void;
}

/** One rule each at baseline: a pod that breaks it (and only it), the field reported, and a compliant variant. */
const baselineCases: RuleCase[] = [
  {
    rule: "privileged",
    violating: (spec) => {
      web(spec).securityContext = { privileged: true };
    },
    field: "spec.containers[0].securityContext.privileged",
    compliant: (spec) => {
      web(spec).securityContext = { privileged: false };
    },
  },
  {
    rule: "hostNetwork",
    violating: (spec) => {
      spec.hostNetwork = true;
    },
    field: "spec.hostNetwork",
    compliant: (spec) => {
      spec.hostNetwork = false;
    },
  },
  {
    rule: "hostPID",
    violating: (spec) => {
      spec.hostPID = true;
    },
    field: "spec.hostPID",
    compliant: (spec) => {
      spec.hostPID = false;
    },
  },
  {
    rule: "hostIPC",
    violating: (spec) => {
      spec.hostIPC = true;
    },
    field: "spec.hostIPC",
    compliant: (spec) => {
      spec.hostIPC = false;
    },
  },
  {
    rule: "hostPath",
    violating: (spec) => {
      spec.volumes = [
        { name: "cache", emptyDir: {} },
        { name: "root", hostPath: { path: "/" } },
      ];
    },
    field: "spec.volumes[1].hostPath",
    compliant: (spec) => {
      spec.volumes = [{ name: "cache", emptyDir: {} }];
    },
  },
  {
    rule: "hostPort",
    violating: (spec) => {
      web(spec).ports = [{ containerPort: 80 }, { containerPort: 443, hostPort: 443 }];
    },
    field: "spec.containers[0].ports[1].hostPort",
    compliant: (spec) => {
      web(spec).ports = [{ containerPort: 443, hostPort: 0 }];
    },
  },
  {
    rule: "capabilities",
    violating: (spec) => {
      web(spec).securityContext = { capabilities: { add: ["NET_BIND_SERVICE", "SYS_ADMIN"] } };
    },
    field: "spec.containers[0].securityContext.capabilities.add[1]",
    compliant: (spec) => {
      web(spec).securityContext = { capabilities: { add: ["CAP_NET_BIND_SERVICE"], drop: ["ALL"] } };
    },
  },
  {
    rule: "allowPrivilegeEscalation",
    violating: (spec) => {
      web(spec).securityContext = { allowPrivilegeEscalation: true };
    },
    field: "spec.containers[0].securityContext.allowPrivilegeEscalation",
    compliant: (spec) => {
      web(spec).securityContext = { allowPrivilegeEscalation: false };
    },
  },
  {
    rule: "procMount",
    violating: (spec) => {
      web(spec).securityContext = { procMount: "Unmasked" };
    },
    field: "spec.containers[0].securityContext.procMount",
    compliant: (spec) => {
      web(spec).securityContext = { procMount: "Default" };
    },
  },
  {
    rule: "sysctls",
    violating: (spec) => {
      spec.securityContext = {
        sysctls: [
          { name: "net.ipv4.tcp_syncookies", value: "1" },
          { name: "kernel.msgmax", value: "65536" },
        ],
      };
    },
    field: "spec.securityContext.sysctls[1].name",
    compliant: (spec) => {
      spec.securityContext = {
        sysctls: [
          { name: "net.ipv4.ip_local_port_range", value: "1024 65535" },
          { name: "net/ipv4/tcp_syncookies", value: "1" },
        ],
      };
    },
  },
  {
    rule: "nodeName",
    violating: (spec) => {
      spec.nodeName = "kwok-node-0";
    },
    field: "spec.nodeName",
    compliant: (spec) => {
      spec.nodeSelector = { "kubernetes.io/os": "linux" };
    },
  },
  {
    rule: "runtimeClass",
    violating: (spec) => {
      spec.runtimeClassName = "runc-unconfined";
    },
    field: "spec.runtimeClassName",
    compliant: (spec) => {
      spec.runtimeClassName = "ring0-gvisor";
    },
  },
  {
    rule: "appArmorProfile",
    violating: (spec) => {
      web(spec).securityContext = { appArmorProfile: { type: "Unconfined" } };
    },
    field: "spec.containers[0].securityContext.appArmorProfile.type",
    compliant: (spec) => {
      web(spec).securityContext = { appArmorProfile: { type: "RuntimeDefault" } };
    },
  },
  {
    rule: "seLinuxOptions",
    violating: (spec) => {
      spec.securityContext = { seLinuxOptions: { type: "spc_t" } };
    },
    field: "spec.securityContext.seLinuxOptions.type",
    compliant: (spec) => {
      spec.securityContext = { seLinuxOptions: { type: "container_t", level: "s0:c123,c456" } };
    },
  },
  {
    rule: "seccompProfile",
    violating: (spec) => {
      spec.securityContext = { seccompProfile: { type: "Unconfined" } };
    },
    field: "spec.securityContext.seccompProfile.type",
    compliant: (spec) => {
      spec.securityContext = { seccompProfile: { type: "RuntimeDefault" } };
    },
  },
  {
    rule: "windowsHostProcess",
    violating: (spec) => {
      spec.securityContext = { windowsOptions: { hostProcess: true } };
    },
    field: "spec.securityContext.windowsOptions.hostProcess",
    compliant: (spec) => {
      spec.securityContext = { windowsOptions: { hostProcess: false } };
    },
  },
  {
    rule: "probeHost",
    violating: (spec) => {
      web(spec).livenessProbe = { httpGet: { host: "169.254.169.254", path: "/latest/meta-data", port: 80 } };
    },
    field: "spec.containers[0].livenessProbe.httpGet.host",
    compliant: (spec) => {
      web(spec).livenessProbe = { httpGet: { path: "/healthz", port: 80 } };
    },
  },
  {
    rule: "volumes",
    violating: (spec) => {
      spec.volumes = [
        { name: "config", configMap: { name: "settings" } },
        { name: "share", nfs: { server: "nfs.internal", path: "/exports" } },
      ];
    },
    field: "spec.volumes[1].nfs",
    compliant: (spec) => {
      spec.volumes = [
        { name: "config", configMap: { name: "settings" } },
        { name: "data", persistentVolumeClaim: { claimName: "data" } },
      ];
    },
  },
  {
    rule: "tolerations",
    violating: (spec) => {
      spec.tolerations = [{ operator: "Exists" }];
    },
    field: "spec.tolerations[0]",
    compliant: (spec) => {
      spec.tolerations = [
        {
          key: "node.kubernetes.io/not-ready",
          operator: "Exists",
          effect: "NoExecute",
          tolerationSeconds: 300,
        },
      ];
    },
  },
];

/** The restricted level's own rules, on a pod that meets everything else restricted asks. */
const restrictedCases: RuleCase[] = [
  {
    rule: "runAsNonRoot",
    violating: (spec) => {
      spec.securityContext = { ...spec.securityContext, runAsNonRoot: false };
    },
    field: "spec.securityContext.runAsNonRoot",
    compliant: (spec) => {
      spec.securityContext = { ...spec.securityContext, runAsNonRoot: undefined };
      web(spec).securityContext = { ...hardened, runAsNonRoot: true };
    },
  },
  {
    rule: "runAsUser",
    violating: (spec) => {
      web(spec).securityContext = { ...hardened, runAsUser: 0 };
    },
    field: "spec.containers[0].securityContext.runAsUser",
    compliant: (spec) => {
      web(spec).securityContext = { ...hardened, runAsUser: 1000 };
    },
  },
];

describe("checkPodIsolation at baseline", () => {
  it("passes a plain pod", () => {
    expect(check(pod())).toEqual([]);
  });

  it("has a test case for every rule", () => {
    const covered = [...baselineCases, ...restrictedCases].map((testCase) => testCase.rule);
    expect(covered.sort()).toEqual([...isolationRules].sort());
  });

  for (const testCase of baselineCases) {
    describe(testCase.rule, () => {
      it("reports the violation with its field and a message for the tenant", () => {
        const violations = check(pod(testCase.violating));
        expect(violations).toHaveLength(1);
        expect(violations[0]).toMatchObject({ rule: testCase.rule, field: testCase.field });
        // One sentence, ending in a full stop.
        expect(violations[0]!.message).toMatch(/^[A-Z][^\n]*\.$/);
        expect(violations[0]!.message.slice(0, -1)).not.toMatch(/\.\s/);
      });

      it("passes the compliant variant", () => {
        expect(check(pod(testCase.compliant))).toEqual([]);
      });

      it("is not reported when the operator disabled it", () => {
        const policy = parseIsolationPolicy({ disabled: [testCase.rule] });
        expect(check(pod(testCase.violating), policy)).toEqual([]);
      });
    });
  }

  it("checks init and ephemeral containers too", () => {
    const violations = check(
      pod((spec) => {
        spec.initContainers = [{ name: "setup", image: "busybox", securityContext: { privileged: true } }];
        spec.ephemeralContainers = [
          { name: "debug", image: "busybox", securityContext: { capabilities: { add: ["SYS_PTRACE"] } } },
        ];
      }),
    );
    expect(ruleAndField(violations)).toEqual([
      { rule: "privileged", field: "spec.initContainers[0].securityContext.privileged" },
      { rule: "capabilities", field: "spec.ephemeralContainers[0].securityContext.capabilities.add[0]" },
    ]);
    expect(violations[0]!.message).toContain('Init container "setup"');
  });

  it('always refuses capability "ALL", even if a policy object lists it', () => {
    const policy = { ...defaultIsolationPolicy(), allowedCapabilities: ["ALL", "NET_RAW"] };
    const violations = check(
      pod((spec) => {
        web(spec).securityContext = { capabilities: { add: ["all", "NET_RAW"] } };
      }),
      policy,
    );
    expect(violations.map((violation) => violation.field)).toEqual([
      "spec.containers[0].securityContext.capabilities.add[0]",
    ]);
  });

  it("allows the capabilities an operator added", () => {
    const policy = parseIsolationPolicy({ allowedCapabilities: ["NET_BIND_SERVICE", "net_raw"] });
    expect(
      check(
        pod((spec) => {
          web(spec).securityContext = { capabilities: { add: ["NET_RAW"] } };
        }),
        policy,
      ),
    ).toEqual([]);
  });

  it("reports every violation of a pod at once", () => {
    const violations = check(
      pod((spec, metadata) => {
        for (const testCase of baselineCases) testCase.violating(spec, metadata);
        web(spec).securityContext = {
          privileged: true,
          allowPrivilegeEscalation: true,
          procMount: "Unmasked",
          capabilities: { add: ["SYS_ADMIN"] },
        };
        spec.securityContext = {
          sysctls: [{ name: "kernel.msgmax", value: "65536" }],
          seLinuxOptions: { type: "spc_t" },
          seccompProfile: { type: "Unconfined" },
          windowsOptions: { hostProcess: true },
        };
        spec.initContainers = [
          { name: "setup", image: "busybox", securityContext: { appArmorProfile: { type: "Unconfined" } } },
        ];
        spec.volumes = [
          { name: "root", hostPath: { path: "/" } },
          { name: "share", nfs: { server: "nfs.internal", path: "/exports" } },
        ];
      }),
    );
    const baselineRules = new Set(baselineCases.map((testCase) => testCase.rule));
    expect(new Set(violations.map((violation) => violation.rule))).toEqual(baselineRules);
  });

  it("does not crash on malformed tenant input", () => {
    const malformed = [
      {
        spec: { containers: [null, { name: "x", securityContext: { capabilities: { add: "SYS_ADMIN" } } }] },
      },
      { spec: "not a spec" },
      { spec: { containers: "web", volumes: [null, 7, { name: "v", projected: { sources: [null, "x"] } }] } },
      { spec: { containers: [{ name: "x", livenessProbe: "probe", lifecycle: { postStart: 1 } }] } },
      { spec: { tolerations: [null, 1, { key: 5 }], securityContext: { sysctls: [null, { name: 3 }] } } },
      { metadata: { annotations: "none" }, spec: { containers: [{ securityContext: "x" }] } },
      { metadata: { annotations: { "container.apparmor.security.beta.kubernetes.io/x": 5 } }, spec: {} },
    ] as unknown as V1Pod[];
    for (const subject of malformed) {
      expect(() => check(subject)).not.toThrow();
      expect(() => check(subject, restricted())).not.toThrow();
    }
    expect(check({} as V1Pod)).toEqual([]);
    expect(check(null as unknown as V1Pod)).toEqual([]);
    // What cannot be read as allowed is refused.
    expect(ruleAndField(check(malformed[4]!))).toContainEqual({
      rule: "tolerations",
      field: "spec.tolerations[2]",
    });
  });
});

describe("each escaping pod spec of issue 14 is refused with its rule and field", () => {
  const escapes: [string, (spec: Spec, metadata: Metadata) => void, IsolationRule, string][] = [
    [
      "seccomp Unconfined on a container",
      (spec) => {
        web(spec).securityContext = { seccompProfile: { type: "Unconfined" } };
      },
      "seccompProfile",
      "spec.containers[0].securityContext.seccompProfile.type",
    ],
    [
      "the pod's seccomp annotation unconfined",
      (_spec, metadata) => {
        metadata.annotations = { "seccomp.security.alpha.kubernetes.io/pod": "unconfined" };
      },
      "seccompProfile",
      "metadata.annotations[seccomp.security.alpha.kubernetes.io/pod]",
    ],
    [
      "a container's seccomp annotation unconfined",
      (_spec, metadata) => {
        metadata.annotations = { "container.seccomp.security.alpha.kubernetes.io/web": "unconfined" };
      },
      "seccompProfile",
      "metadata.annotations[container.seccomp.security.alpha.kubernetes.io/web]",
    ],
    [
      "AppArmor Unconfined for the pod",
      (spec) => {
        spec.securityContext = loose({ appArmorProfile: { type: "Unconfined" } });
      },
      "appArmorProfile",
      "spec.securityContext.appArmorProfile.type",
    ],
    [
      "the AppArmor annotation unconfined",
      (_spec, metadata) => {
        metadata.annotations = { "container.apparmor.security.beta.kubernetes.io/web": "unconfined" };
      },
      "appArmorProfile",
      "metadata.annotations[container.apparmor.security.beta.kubernetes.io/web]",
    ],
    [
      "SELinux type spc_t on a container",
      (spec) => {
        web(spec).securityContext = { seLinuxOptions: { type: "spc_t" } };
      },
      "seLinuxOptions",
      "spec.containers[0].securityContext.seLinuxOptions.type",
    ],
    [
      "an SELinux user",
      (spec) => {
        spec.securityContext = { seLinuxOptions: { user: "system_u" } };
      },
      "seLinuxOptions",
      "spec.securityContext.seLinuxOptions.user",
    ],
    [
      "an SELinux role",
      (spec) => {
        web(spec).securityContext = { seLinuxOptions: { role: "system_r" } };
      },
      "seLinuxOptions",
      "spec.containers[0].securityContext.seLinuxOptions.role",
    ],
    [
      "a readiness probe's tcpSocket.host",
      (spec) => {
        web(spec).readinessProbe = { tcpSocket: { host: "10.0.0.1", port: 6443 } };
      },
      "probeHost",
      "spec.containers[0].readinessProbe.tcpSocket.host",
    ],
    [
      "a startup probe's httpGet.host",
      (spec) => {
        web(spec).startupProbe = { httpGet: { host: "kubernetes.default", port: 443 } };
      },
      "probeHost",
      "spec.containers[0].startupProbe.httpGet.host",
    ],
    [
      "a postStart handler's httpGet.host",
      (spec) => {
        web(spec).lifecycle = { postStart: { httpGet: { host: "10.0.0.1", port: 10250 } } };
      },
      "probeHost",
      "spec.containers[0].lifecycle.postStart.httpGet.host",
    ],
    [
      "a preStop handler's tcpSocket.host on an init container",
      (spec) => {
        spec.initContainers = untyped([
          {
            name: "setup",
            image: "busybox",
            lifecycle: { preStop: { tcpSocket: { host: "10.0.0.1", port: 22 } } },
          },
        ]);
      },
      "probeHost",
      "spec.initContainers[0].lifecycle.preStop.tcpSocket.host",
    ],
    [
      "a gitRepo volume",
      (spec) => {
        spec.volumes = [{ name: "src", gitRepo: { repository: "https://example.com/x.git" } }];
      },
      "volumes",
      "spec.volumes[0].gitRepo",
    ],
    [
      "a cloud disk",
      (spec) => {
        spec.volumes = [{ name: "disk", awsElasticBlockStore: { volumeID: "vol-123" } }];
      },
      "volumes",
      "spec.volumes[0].awsElasticBlockStore",
    ],
    [
      "an inline CSI volume",
      (spec) => {
        spec.volumes = [{ name: "secrets", csi: { driver: "secrets-store.csi.k8s.io" } }];
      },
      "volumes",
      "spec.volumes[0].csi",
    ],
    [
      "an iSCSI volume",
      (spec) => {
        spec.volumes = [{ name: "lun", iscsi: { targetPortal: "10.0.0.2:3260", iqn: "iqn.x", lun: 0 } }];
      },
      "volumes",
      "spec.volumes[0].iscsi",
    ],
    [
      "a projected cluster trust bundle",
      (spec) => {
        spec.volumes = untyped([
          { name: "trust", projected: { sources: [{ clusterTrustBundle: { name: "x", path: "ca" } }] } },
        ]);
      },
      "volumes",
      "spec.volumes[0].projected.sources[0].clusterTrustBundle",
    ],
    [
      "an ephemeral claim pre-bound to another volume",
      (spec) => {
        spec.volumes = [
          {
            name: "scratch",
            ephemeral: {
              volumeClaimTemplate: { spec: { accessModes: ["ReadWriteOnce"], volumeName: "pv-of-globex" } },
            },
          },
        ];
      },
      "volumes",
      "spec.volumes[0].ephemeral.volumeClaimTemplate.spec.volumeName",
    ],
    [
      "an ephemeral claim copying another claim (dataSource)",
      (spec) => {
        spec.volumes = [
          {
            name: "scratch",
            ephemeral: {
              volumeClaimTemplate: { spec: { dataSource: { kind: "PersistentVolumeClaim", name: "db" } } },
            },
          },
        ];
      },
      "volumes",
      "spec.volumes[0].ephemeral.volumeClaimTemplate.spec.dataSource",
    ],
    [
      "an ephemeral claim from a snapshot (dataSourceRef)",
      (spec) => {
        spec.volumes = [
          {
            name: "scratch",
            ephemeral: {
              volumeClaimTemplate: {
                spec: {
                  dataSourceRef: { apiGroup: "snapshot.storage.k8s.io", kind: "VolumeSnapshot", name: "s" },
                },
              },
            },
          },
        ];
      },
      "volumes",
      "spec.volumes[0].ephemeral.volumeClaimTemplate.spec.dataSourceRef",
    ],
    [
      "a toleration of an operator's taint",
      (spec) => {
        spec.tolerations = [{ key: "dedicated", operator: "Equal", value: "infra", effect: "NoSchedule" }];
      },
      "tolerations",
      "spec.tolerations[0].key",
    ],
    [
      "a toleration of cordoned nodes",
      (spec) => {
        spec.tolerations = [{ key: "node.kubernetes.io/unschedulable", operator: "Exists" }];
      },
      "tolerations",
      "spec.tolerations[0].key",
    ],
    [
      "a toleration of every NoExecute taint",
      (spec) => {
        spec.tolerations = [{ operator: "Exists", effect: "NoExecute" }];
      },
      "tolerations",
      "spec.tolerations[0]",
    ],
    [
      "a Windows host process container",
      (spec) => {
        web(spec).securityContext = { windowsOptions: { hostProcess: true } };
      },
      "windowsHostProcess",
      "spec.containers[0].securityContext.windowsOptions.hostProcess",
    ],
  ];

  for (const [what, change, rule, field] of escapes) {
    it(`refuses ${what} (${rule})`, () => {
      const violations = check(pod(change));
      expect(ruleAndField(violations)).toEqual([{ rule, field }]);
      expect(violations[0]!.message).toMatch(/^[A-Z][^\n]*\.$/);
    });
  }
});

describe("safe pod specs pass", () => {
  const safe: [string, (spec: Spec, metadata: Metadata) => void][] = [
    ["a plain nginx pod", () => {}],
    [
      "RuntimeDefault and Localhost seccomp profiles",
      (spec) => {
        spec.securityContext = { seccompProfile: { type: "RuntimeDefault" } };
        web(spec).securityContext = { seccompProfile: { type: "Localhost", localhostProfile: "web.json" } };
      },
    ],
    [
      "AppArmor profiles and annotations that keep the confinement",
      (spec, metadata) => {
        spec.securityContext = loose({ appArmorProfile: { type: "RuntimeDefault" } });
        web(spec).securityContext = { appArmorProfile: { type: "Localhost", localhostProfile: "k8s-web" } };
        metadata.annotations = {
          "container.apparmor.security.beta.kubernetes.io/web": "runtime/default",
          "seccomp.security.alpha.kubernetes.io/pod": "runtime/default",
        };
      },
    ],
    [
      "an SELinux level and an allowed type",
      (spec) => {
        web(spec).securityContext = { seLinuxOptions: { type: "container_init_t", level: "s0:c1,c2" } };
      },
    ],
    [
      "configMap, secret, emptyDir, downwardAPI, claim and ephemeral volumes",
      (spec) => {
        spec.volumes = [
          { name: "a", configMap: { name: "settings" } },
          { name: "b", secret: { secretName: "token" } },
          { name: "c", emptyDir: { medium: "Memory" } },
          {
            name: "d",
            downwardAPI: { items: [{ path: "labels", fieldRef: { fieldPath: "metadata.labels" } }] },
          },
          { name: "e", persistentVolumeClaim: { claimName: "data" } },
          {
            name: "f",
            ephemeral: {
              volumeClaimTemplate: {
                spec: { accessModes: ["ReadWriteOnce"], resources: { requests: { storage: "1Gi" } } },
              },
            },
          },
        ];
      },
    ],
    [
      "the tenant's own projected service-account token volume (kube-api-access)",
      (spec) => {
        spec.volumes = [
          {
            name: "kube-api-access-abcde",
            projected: {
              sources: [
                { serviceAccountToken: { path: "token", expirationSeconds: 3607 } },
                { configMap: { name: "kube-root-ca.crt", items: [{ key: "ca.crt", path: "ca.crt" }] } },
                {
                  downwardAPI: {
                    items: [{ path: "namespace", fieldRef: { fieldPath: "metadata.namespace" } }],
                  },
                },
              ],
            },
          },
        ];
      },
    ],
    [
      "the tolerations every pod gets from DefaultTolerationSeconds",
      (spec) => {
        spec.tolerations = [
          {
            key: "node.kubernetes.io/not-ready",
            operator: "Exists",
            effect: "NoExecute",
            tolerationSeconds: 300,
          },
          {
            key: "node.kubernetes.io/unreachable",
            operator: "Exists",
            effect: "NoExecute",
            tolerationSeconds: 300,
          },
        ];
      },
    ],
    [
      "probes and handlers on the pod's own address",
      (spec) => {
        web(spec).livenessProbe = { httpGet: { path: "/healthz", port: 80, host: "" } };
        web(spec).readinessProbe = { tcpSocket: { port: 80 } };
        web(spec).startupProbe = { exec: { command: ["true"] } };
        web(spec).lifecycle = {
          preStop: { httpGet: { path: "/drain", port: 80 } },
          postStart: { exec: { command: ["true"] } },
        };
      },
    ],
  ];
  for (const [what, change] of safe) {
    it(what, () => {
      expect(check(pod(change))).toEqual([]);
    });
  }
});

describe("checkPodIsolation at restricted", () => {
  it("passes a pod that runs as non-root with no capabilities, no escalation and RuntimeDefault seccomp", () => {
    expect(check(restrictedPod(), restricted())).toEqual([]);
  });

  for (const testCase of restrictedCases) {
    describe(testCase.rule, () => {
      it("reports the violation with its field", () => {
        const violations = check(restrictedPod(testCase.violating), restricted());
        expect(ruleAndField(violations)).toEqual([{ rule: testCase.rule, field: testCase.field }]);
        expect(violations[0]!.message).toMatch(/^[A-Z][^\n]*\.$/);
        expect(violations[0]!.message.slice(0, -1)).not.toMatch(/\.\s/);
      });

      it("passes the compliant variant", () => {
        expect(check(restrictedPod(testCase.compliant), restricted())).toEqual([]);
      });

      it("is not reported at baseline, nor when the operator disabled it", () => {
        expect(check(restrictedPod(testCase.violating))).toEqual([]);
        const policy = restricted(parseIsolationPolicy({ disabled: [testCase.rule] }));
        expect(check(restrictedPod(testCase.violating), policy)).toEqual([]);
      });
    });
  }

  it("asks a plain pod for everything the restricted level requires, naming each field", () => {
    expect(ruleAndField(check(pod(), restricted()))).toEqual([
      {
        rule: "allowPrivilegeEscalation",
        field: "spec.containers[0].securityContext.allowPrivilegeEscalation",
      },
      { rule: "capabilities", field: "spec.containers[0].securityContext.capabilities.drop" },
      { rule: "runAsNonRoot", field: "spec.containers[0].securityContext.runAsNonRoot" },
      { rule: "seccompProfile", field: "spec.containers[0].securityContext.seccompProfile.type" },
    ]);
  });

  it("accepts the requirements per container instead of for the pod", () => {
    const perContainer = pod((spec) => {
      web(spec).securityContext = {
        ...hardened,
        runAsNonRoot: true,
        runAsUser: 1000,
        seccompProfile: { type: "Localhost", localhostProfile: "web.json" },
      };
    });
    expect(check(perContainer, restricted())).toEqual([]);
  });

  it("holds init and ephemeral containers to it too", () => {
    const violations = check(
      restrictedPod((spec) => {
        spec.initContainers = [{ name: "setup", image: "busybox", securityContext: { runAsNonRoot: false } }];
      }),
      restricted(),
    );
    expect(ruleAndField(violations)).toEqual([
      {
        rule: "allowPrivilegeEscalation",
        field: "spec.initContainers[0].securityContext.allowPrivilegeEscalation",
      },
      { rule: "capabilities", field: "spec.initContainers[0].securityContext.capabilities.drop" },
      { rule: "runAsNonRoot", field: "spec.initContainers[0].securityContext.runAsNonRoot" },
    ]);
  });

  it("lets a container add NET_BIND_SERVICE only, whatever else the operator allows", () => {
    const policy = restricted(parseIsolationPolicy({ allowedCapabilities: ["NET_BIND_SERVICE", "NET_RAW"] }));
    const violations = check(
      restrictedPod((spec) => {
        web(spec).securityContext = {
          ...hardened,
          capabilities: { drop: ["all"], add: ["NET_BIND_SERVICE", "NET_RAW"] },
        };
      }),
      policy,
    );
    expect(ruleAndField(violations)).toEqual([
      { rule: "capabilities", field: "spec.containers[0].securityContext.capabilities.add[1]" },
    ]);
  });

  it("reports every rule at once", () => {
    const violations = check(
      pod((spec, metadata) => {
        for (const testCase of [...baselineCases, ...restrictedCases]) testCase.violating(spec, metadata);
        web(spec).securityContext = { privileged: true, procMount: "Unmasked", runAsUser: 0 };
        spec.securityContext = {
          runAsNonRoot: false,
          sysctls: [{ name: "kernel.msgmax", value: "65536" }],
          seLinuxOptions: { type: "spc_t" },
          windowsOptions: { hostProcess: true },
        };
        spec.initContainers = [
          { name: "setup", image: "busybox", securityContext: { appArmorProfile: { type: "Unconfined" } } },
        ];
        spec.volumes = [
          { name: "root", hostPath: { path: "/" } },
          { name: "share", nfs: { server: "nfs.internal", path: "/exports" } },
        ];
      }),
      restricted(),
    );
    expect(new Set(violations.map((violation) => violation.rule))).toEqual(new Set(isolationRules));
  });
});

describe("tolerations the operator allows", () => {
  const tolerating = (key: string) =>
    pod((spec) => {
      spec.tolerations = [{ key, operator: "Exists", effect: "NoSchedule" }];
    });

  it("allows only the keys in the policy, and never an empty key", () => {
    const policy = parseIsolationPolicy({ allowedTolerations: ["ring0.dev/tenant-pool"] });
    expect(check(tolerating("ring0.dev/tenant-pool"), policy)).toEqual([]);
    expect(ruleAndField(check(tolerating("node.kubernetes.io/not-ready"), policy))).toEqual([
      { rule: "tolerations", field: "spec.tolerations[0].key" },
    ]);
    expect(ruleAndField(check(tolerating(""), policy))).toEqual([
      { rule: "tolerations", field: "spec.tolerations[0]" },
    ]);
  });

  it("names the allowed keys in the message", () => {
    const [violation] = check(tolerating("dedicated"));
    expect(violation?.message).toContain(
      "allowed: node.kubernetes.io/not-ready, node.kubernetes.io/unreachable",
    );
  });
});

describe("podSecurityLabels: the super namespace's Pod Security labels", () => {
  const labels = (level: "baseline" | "restricted", enforce: string) => ({
    "pod-security.kubernetes.io/enforce": enforce,
    "pod-security.kubernetes.io/enforce-version": "latest",
    "pod-security.kubernetes.io/warn": level,
    "pod-security.kubernetes.io/warn-version": "latest",
    "pod-security.kubernetes.io/audit": level,
    "pod-security.kubernetes.io/audit-version": "latest",
  });

  it("enforces, warns and audits at the tenant's level", () => {
    expect(podSecurityLabels(defaultIsolationPolicy())).toEqual(labels("baseline", "baseline"));
    expect(podSecurityLabels(restricted())).toEqual(labels("restricted", "restricted"));
  });

  it("enforces nothing below when the operator relaxed a rule the standard covers", () => {
    expect(podSecurityLabels(parseIsolationPolicy({ disabled: ["hostPath"] }))).toEqual(
      labels("baseline", "privileged"),
    );
    expect(podSecurityLabels(parseIsolationPolicy({ allowedCapabilities: ["NET_RAW"] }))).toEqual(
      labels("baseline", "privileged"),
    );
    expect(podSecurityLabels(restricted(parseIsolationPolicy({ disabled: ["runAsUser"] })))).toEqual(
      labels("restricted", "privileged"),
    );
  });

  it("keeps enforcing when only Ring0's own rules or the standard's own capabilities are relaxed", () => {
    const relaxed = parseIsolationPolicy({
      disabled: ["nodeName", "tolerations", "volumes", "allowPrivilegeEscalation"],
      allowedCapabilities: ["NET_BIND_SERVICE", "CHOWN"],
    });
    expect(podSecurityLabels(relaxed)).toEqual(labels("baseline", "baseline"));
    expect(podSecurityLabels(restricted(relaxed))).toEqual(labels("restricted", "privileged"));
  });
});

describe("tenantIsolationPolicy", () => {
  it("holds a tenant to its own level, or the operator's default", () => {
    const operator = parseIsolationPolicy({ disabled: ["hostPort"] });
    expect(tenantIsolationPolicy(operator, "restricted")).toEqual({ ...operator, podSecurity: "restricted" });
    expect(tenantIsolationPolicy(operator, undefined)).toBe(operator);
    expect(tenantIsolationPolicy(operator, "privileged")).toBe(operator);
    const strict = parseIsolationPolicy({ podSecurity: "restricted" });
    expect(tenantIsolationPolicy(strict, "baseline").podSecurity).toBe("baseline");
  });

  it("gives a tenant its own default runtime class, and the filter holds it to the allowed ones", () => {
    const operator = parseIsolationPolicy({});
    const sandboxed = tenantIsolationPolicy(operator, undefined, "ring0-gvisor");
    expect(sandboxed.defaultRuntimeClass).toBe("ring0-gvisor");
    expect(runtimeClassOf({}, sandboxed)).toBe("ring0-gvisor");
    expect(runtimeClassOf({ runtimeClassName: "ring0-gvisor" }, operator)).toBe("ring0-gvisor");
    expect(runtimeClassOf({}, operator)).toBeUndefined();
    // Never a class the operator does not allow, even with the filter's rule turned off.
    expect(runtimeClassOf({ runtimeClassName: "runc-privileged" }, operator)).toBeUndefined();
    expect(runtimeClassOf({}, tenantIsolationPolicy(operator, undefined, "kata"))).toBeUndefined();
    expect(check(pod(), sandboxed)).toEqual([]);
    // A default the operator does not allow: every pod that names none is refused, saying who fixes it.
    const unknown = tenantIsolationPolicy(operator, undefined, "kata");
    const violations = check(pod(), unknown);
    expect(violations).toMatchObject([{ rule: "runtimeClass", field: "spec.runtimeClassName" }]);
    expect(violations[0]?.message).toContain('default runtime class "kata"');
    expect(violations[0]?.message).toContain("spec.syncer.runtimeClass");
    // A pod's own allowed class still runs.
    expect(
      check(
        pod((spec) => (spec.runtimeClassName = "ring0-gvisor")),
        unknown,
      ),
    ).toEqual([]);
    // With no class allowed at all, naming one is refused.
    const none = parseIsolationPolicy({ runtimeClasses: [] });
    expect(
      check(
        pod((spec) => (spec.runtimeClassName = "ring0-gvisor")),
        none,
      )[0]?.message,
    ).toContain("(allowed: none)");
  });
});

describe("runningPodPolicy", () => {
  it("holds a running pod's changes to the tolerations rule only, if the operator enforces it", () => {
    const running = runningPodPolicy(defaultIsolationPolicy());
    expect(running.enabled).toEqual(["tolerations"]);
    expect(
      check(
        pod((spec) => (spec.hostNetwork = true)),
        running,
      ),
    ).toEqual([]);
    expect(
      check(
        pod((spec) => (spec.tolerations = [{ operator: "Exists" }])),
        running,
      ),
    ).toHaveLength(1);
    expect(runningPodPolicy(parseIsolationPolicy({ disabled: ["tolerations"] })).enabled).toEqual([]);
  });
});

describe("parseIsolationPolicy", () => {
  it("gives the defaults for an empty object", () => {
    expect(parseIsolationPolicy("{}")).toEqual(defaultIsolationPolicy());
    expect(defaultIsolationPolicy()).toEqual({
      enabled: [...isolationRules],
      allowedCapabilities: ["NET_BIND_SERVICE"],
      allowedTolerations: ["node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"],
      podSecurity: "baseline",
      namespaceLabels: [],
      podAnnotations: [],
      runtimeClasses: ["ring0-gvisor"],
      storageClasses: ["ring0-local"],
    });
  });

  it("reads every field (capabilities normalised)", () => {
    expect(
      parseIsolationPolicy(
        JSON.stringify({
          enabled: ["privileged", "hostPath", "hostPort"],
          disabled: ["hostPort"],
          allowedCapabilities: ["cap_net_bind_service", "CHOWN"],
          allowedTolerations: ["node.kubernetes.io/not-ready", "pool"],
          podSecurity: "restricted",
          namespaceLabels: ["team", "example.com/*"],
          podAnnotations: ["example.com/owner"],
          runtimeClasses: ["ring0-gvisor", "kata.example.com"],
          defaultRuntimeClass: "ring0-gvisor",
          storageClasses: ["fast.example.com", "ring0-local"],
        }),
      ),
    ).toEqual({
      enabled: ["privileged", "hostPath"],
      allowedCapabilities: ["NET_BIND_SERVICE", "CHOWN"],
      allowedTolerations: ["node.kubernetes.io/not-ready", "pool"],
      podSecurity: "restricted",
      namespaceLabels: ["team", "example.com/*"],
      podAnnotations: ["example.com/owner"],
      runtimeClasses: ["ring0-gvisor", "kata.example.com"],
      defaultRuntimeClass: "ring0-gvisor",
      storageClasses: ["fast.example.com", "ring0-local"],
    });
  });

  const bad: [string, unknown, string][] = [
    ["invalid JSON", "{enabled:", "(document)"],
    ["a list instead of an object", "[]", "(document)"],
    ["an unknown field", { allowedCapabilites: [] }, "allowedCapabilites"],
    ["enabled that is not a list", { enabled: "privileged" }, "enabled"],
    ["an unknown rule", { enabled: ["privileged", "hostpid"] }, "enabled[1]"],
    ["an unknown disabled rule", { disabled: ["seccomp"] }, "disabled[0]"],
    ["a capability that is not a string", { allowedCapabilities: [42] }, "allowedCapabilities[0]"],
    ["capability ALL", { allowedCapabilities: ["NET_RAW", "ALL"] }, "allowedCapabilities[1]"],
    ["a malformed capability", { allowedCapabilities: ["net raw"] }, "allowedCapabilities[0]"],
    ["an empty toleration key (every taint)", { allowedTolerations: [""] }, "allowedTolerations[0]"],
    ["a malformed toleration key", { allowedTolerations: ["a b"] }, "allowedTolerations[0]"],
    ["an unknown level", { podSecurity: "privileged" }, "podSecurity"],
    [
      "a Pod Security label",
      { namespaceLabels: ["pod-security.kubernetes.io/enforce"] },
      "namespaceLabels[0]",
    ],
    ["Ring0's own labels", { namespaceLabels: ["team", "ring0.dev/*"] }, "namespaceLabels[1]"],
    [
      "a Kubernetes annotation",
      { podAnnotations: ["container.apparmor.security.beta.kubernetes.io/web"] },
      "podAnnotations[0]",
    ],
    [
      "kwok's annotations",
      { podAnnotations: ["pod-complete.stage.kwok.x-k8s.io/delay"] },
      "podAnnotations[0]",
    ],
    ["a malformed key", { podAnnotations: ["*"] }, "podAnnotations[0]"],
    ["a malformed runtime class", { runtimeClasses: ["gVisor"] }, "runtimeClasses[0]"],
    ["a malformed storage class", { storageClasses: ["local", "Fast Disks"] }, "storageClasses[1]"],
    ["a default runtime class not allowed", { defaultRuntimeClass: "kata" }, "defaultRuntimeClass"],
    [
      "a default runtime class when none is allowed",
      { runtimeClasses: [], defaultRuntimeClass: "ring0-gvisor" },
      "defaultRuntimeClass",
    ],
  ];
  for (const [what, input, field] of bad) {
    it(`refuses ${what}, naming field ${field}`, () => {
      let error: unknown;
      try {
        parseIsolationPolicy(input);
      } catch (caught) {
        error = caught;
      }
      expect(error).toBeInstanceOf(IsolationPolicyError);
      expect((error as IsolationPolicyError).field).toBe(field);
      expect((error as Error).message).toContain(`isolation policy: ${field}:`);
    });
  }

  it("explains an unknown rule by listing the known ones", () => {
    expect(() => parseIsolationPolicy({ enabled: ["hostpid"] })).toThrow(
      /unknown rule "hostpid" \(rules: privileged, hostNetwork, hostPID/,
    );
  });
});
