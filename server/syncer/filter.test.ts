import { describe, expect, it } from "vitest";
import type { V1Pod } from "@/server/k8s/nodes";
import type { IsolationRule } from "./contracts";
import {
  checkPodIsolation,
  defaultIsolationPolicy,
  IsolationPolicyError,
  isolationRules,
  parseIsolationPolicy,
} from "./filter";

type Spec = NonNullable<V1Pod["spec"]>;

/** A compliant pod: one nginx container, nothing that reaches the node. */
function pod(change: (spec: Spec) => void = () => {}): V1Pod {
  const spec: Spec = { containers: [{ name: "web", image: "nginx", ports: [{ containerPort: 80 }] }] };
  change(spec);
  return { apiVersion: "v1", kind: "Pod", metadata: { name: "web", namespace: "default" }, spec };
}

const web = (spec: Spec) => spec.containers[0]!;

function check(subject: V1Pod, policy = defaultIsolationPolicy()) {
  return checkPodIsolation(subject, policy);
}

/** One rule each: a pod that breaks it (and only it), the field reported, and a compliant variant. */
const cases: {
  rule: IsolationRule;
  violating: (spec: Spec) => void;
  field: string;
  compliant: (spec: Spec) => void;
}[] = [
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
];

describe("checkPodIsolation", () => {
  it("passes a plain pod", () => {
    expect(check(pod())).toEqual([]);
  });

  it("has a test case for every rule", () => {
    expect(cases.map((testCase) => testCase.rule).sort()).toEqual([...isolationRules].sort());
  });

  for (const testCase of cases) {
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
    expect(violations.map(({ rule, field }) => ({ rule, field }))).toEqual([
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
      pod((spec) => {
        for (const testCase of cases) testCase.violating(spec);
        web(spec).securityContext = {
          privileged: true,
          allowPrivilegeEscalation: true,
          procMount: "Unmasked",
          capabilities: { add: ["SYS_ADMIN"] },
        };
      }),
    );
    expect(new Set(violations.map((violation) => violation.rule))).toEqual(new Set(isolationRules));
  });

  it("does not crash on malformed tenant input", () => {
    const malformed = {
      spec: { containers: [null, { name: "x", securityContext: { capabilities: { add: "SYS_ADMIN" } } }] },
    } as unknown as V1Pod;
    expect(() => check(malformed)).not.toThrow();
    expect(check({} as V1Pod)).toEqual([]);
  });
});

describe("parseIsolationPolicy", () => {
  it("gives the defaults for an empty object: every rule, NET_BIND_SERVICE", () => {
    expect(parseIsolationPolicy("{}")).toEqual(defaultIsolationPolicy());
    expect(defaultIsolationPolicy()).toEqual({
      enabled: [...isolationRules],
      allowedCapabilities: ["NET_BIND_SERVICE"],
    });
  });

  it("reads enabled rules, disabled rules and capabilities (normalised)", () => {
    expect(
      parseIsolationPolicy(
        JSON.stringify({
          enabled: ["privileged", "hostPath", "hostPort"],
          disabled: ["hostPort"],
          allowedCapabilities: ["cap_net_bind_service", "CHOWN"],
        }),
      ),
    ).toEqual({ enabled: ["privileged", "hostPath"], allowedCapabilities: ["NET_BIND_SERVICE", "CHOWN"] });
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
