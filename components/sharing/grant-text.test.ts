import { describe, expect, it } from "vitest";
import { granteesText, rulePresets, rulesText, splitList } from "./grant-text";

describe("grant text", () => {
  it("says what a rule allows", () => {
    expect(
      rulesText([
        {
          namespaces: ["shared"],
          apiGroups: [""],
          resources: ["pods", "pods/log"],
          verbs: ["get", "list", "watch"],
        },
        {
          namespaces: ["a", "b"],
          apiGroups: ["apps"],
          resources: ["deployments"],
          resourceNames: ["web"],
          verbs: ["get"],
        },
      ]),
    ).toBe("get, list, watch pods, pods/log in shared; get deployments.apps named web in namespaces a, b");
  });

  it("says who receives", () => {
    expect(
      granteesText([{ tenant: "globex" }, { tenant: "initech", users: ["ann"], groups: ["viewers"] }]),
    ).toBe("globex (everyone), initech: users ann; groups viewers");
  });

  it("splits typed lists", () => {
    expect(splitList(" a, b  c,,")).toEqual(["a", "b", "c"]);
  });
});

describe("rule presets", () => {
  it("never let a grantee write pods: write verbs only on subresources", () => {
    for (const preset of rulePresets) {
      for (const rule of preset.rules) {
        const writes = rule.verbs.some((verb) => !["get", "list", "watch"].includes(verb));
        if (writes) expect(rule.resources.every((resource) => resource.includes("/"))).toBe(true);
      }
    }
  });
});
