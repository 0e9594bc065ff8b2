import { describe, expect, it } from "vitest";
import { runCommand } from "./commands";
import { UsageError } from "./errors";
import { renderTable } from "./output";
import { parseShareCreate, parseShareList, parseShareRevoke } from "./share";
import { parseAllow, parseDuration, parseExpiry, parseGrantees, parseRules } from "./share-flags";
import {
  describeGrantee,
  describeRule,
  type GrantSummaryView,
  grantColumns,
  type SharedGrantRow,
  sharedWithMeColumns,
} from "./share-table";

const now = new Date("2026-11-21T12:00:00Z");

function usageError(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(UsageError);
    return (error as Error).message;
  }
  throw new Error("expected a usage error");
}

describe("parseGrantees", () => {
  it("reads whole tenants, named users and role groups, one grantee per tenant", () => {
    expect(
      parseGrantees(["globex", "initech:alice,bob", "umbrella@members", "hooli:carol@admins,viewers"]),
    ).toEqual([
      { tenant: "globex" },
      { tenant: "initech", users: ["alice", "bob"] },
      { tenant: "umbrella", groups: ["members"] },
      { tenant: "hooli", users: ["carol"], groups: ["admins", "viewers"] },
    ]);
    expect(parseGrantees(["initech:alice", "initech:bob,alice", "initech@viewers"])).toEqual([
      { tenant: "initech", users: ["alice", "bob"], groups: ["viewers"] },
    ]);
    expect(parseGrantees(["globex", "globex"])).toEqual([{ tenant: "globex" }]);
  });

  it("says what to fix", () => {
    expect(usageError(() => parseGrantees([]))).toMatch(/^--to: required/);
    expect(usageError(() => parseGrantees(["Globex"]))).toMatch(/--to "Globex": expected <tenant>/);
    expect(usageError(() => parseGrantees(["globex:"]))).toMatch(/name the users after the colon/);
    expect(usageError(() => parseGrantees(["globex@"]))).toMatch(/name a role group after @/);
    expect(usageError(() => parseGrantees(["globex@owners"]))).toBe(
      '--to "globex@owners": "owners" is not a role group; use admins, members, viewers',
    );
    expect(usageError(() => parseGrantees(["globex", "globex:alice"]))).toMatch(
      /--to globex: given both as the whole tenant and as some of its users or groups/,
    );
  });
});

describe("parseAllow", () => {
  it("reads presets", () => {
    expect(parseAllow("read-pods")).toEqual([
      { apiGroups: [""], resources: ["pods"], verbs: ["get", "list", "watch"] },
    ]);
    expect(parseAllow("logs")).toEqual([{ apiGroups: [""], resources: ["pods/log"], verbs: ["get"] }]);
    expect(parseAllow("exec")).toEqual([
      { apiGroups: [""], resources: ["pods/exec"], verbs: ["create", "get"] },
    ]);
  });

  it("reads verbs:resources, knowing the API group of common resources and splitting by group", () => {
    expect(parseAllow("get,list,watch:pods,pods/log")).toEqual([
      { apiGroups: [""], resources: ["pods", "pods/log"], verbs: ["get", "list", "watch"] },
    ]);
    expect(parseAllow("get,list:pods,deployments,deployments/scale")).toEqual([
      { apiGroups: [""], resources: ["pods"], verbs: ["get", "list"] },
      { apiGroups: ["apps"], resources: ["deployments", "deployments/scale"], verbs: ["get", "list"] },
    ]);
    expect(parseAllow("get:widgets:example.com")).toEqual([
      { apiGroups: ["example.com"], resources: ["widgets"], verbs: ["get"] },
    ]);
    expect(parseAllow("GET:ConfigMaps:core")).toEqual([
      { apiGroups: [""], resources: ["configmaps"], verbs: ["get"] },
    ]);
  });

  it("says what to fix", () => {
    expect(usageError(() => parseAllow("read-everything"))).toMatch(
      /--allow "read-everything": expected <verbs>:<resources>\[:<apiGroup>\].*presets?: read-pods, logs, exec/,
    );
    expect(usageError(() => parseAllow("gte,list:pods"))).toBe(
      '--allow "gte,list:pods": unknown verb "gte"; use get, list, watch, create, update, patch, delete, deletecollection',
    );
    expect(usageError(() => parseAllow("get:"))).toMatch(/name at least one resource/);
    expect(usageError(() => parseAllow(":pods"))).toMatch(/name at least one verb/);
    expect(usageError(() => parseAllow("get:widgets"))).toMatch(
      /name the API group of "widgets": get:widgets:<apiGroup> \(core for the core group\)/,
    );
    expect(usageError(() => parseAllow("get:pods:Not_A_Group"))).toMatch(/is not an API group/);
    expect(usageError(() => parseAllow("get:pods log"))).toMatch(/"pods log" is not a resource/);
    expect(usageError(() => parseAllow("get:pods:core:x"))).toMatch(/expected <verbs>:<resources>/);
  });
});

describe("parseRules", () => {
  it("gives every rule the namespaces and resource names", () => {
    expect(parseRules(["read-pods", "logs"], ["shared", "dev", "shared"], ["web-0"])).toEqual([
      {
        namespaces: ["shared", "dev"],
        apiGroups: [""],
        resources: ["pods"],
        resourceNames: ["web-0"],
        verbs: ["get", "list", "watch"],
      },
      {
        namespaces: ["shared", "dev"],
        apiGroups: [""],
        resources: ["pods/log"],
        resourceNames: ["web-0"],
        verbs: ["get"],
      },
    ]);
  });

  it("requires --allow and --namespace, and namespace names", () => {
    expect(usageError(() => parseRules([], ["shared"]))).toMatch(/^--allow: required/);
    expect(usageError(() => parseRules(["logs"], []))).toMatch(/^--namespace: required/);
    expect(usageError(() => parseRules(["logs"], ["Shared"]))).toMatch(
      /--namespace "Shared": expected a namespace name/,
    );
    expect(usageError(() => parseRules(["logs"], ["shared"], ["*"]))).toMatch(/--resource-name "\*"/);
  });
});

describe("expiry", () => {
  it("reads --for durations", () => {
    expect(parseDuration("7d")).toBe(7 * 86_400_000);
    expect(parseDuration("1d12h")).toBe(36 * 3_600_000);
    expect(parseDuration("2w")).toBe(14 * 86_400_000);
    expect(parseDuration("90m")).toBe(90 * 60_000);
    expect(usageError(() => parseDuration("7 days"))).toMatch(
      /--for "7 days": expected a duration such as 7d/,
    );
    expect(usageError(() => parseDuration("0d"))).toMatch(/longer than zero/);
    expect(usageError(() => parseDuration("1.5d"))).toMatch(/expected a duration/);
  });

  it("reads --expires or --for against the clock, never both", () => {
    expect(parseExpiry({}, now)).toBeUndefined();
    expect(parseExpiry({ for: "7d" }, now)).toBe("2026-11-28T12:00:00.000Z");
    expect(parseExpiry({ expires: "2026-12-01T00:00:00Z" }, now)).toBe("2026-12-01T00:00:00.000Z");
    expect(parseExpiry({ expires: "2026-12-01T01:00:00+01:00" }, now)).toBe("2026-12-01T00:00:00.000Z");
    expect(parseExpiry({ expires: "2026-12-01" }, now)).toBe("2026-12-01T00:00:00.000Z");
    expect(usageError(() => parseExpiry({ expires: "2026-12-01T00:00:00" }, now))).toMatch(
      /expected a date-time with its zone/,
    );
    expect(usageError(() => parseExpiry({ expires: "next week" }, now))).toMatch(/--expires "next week"/);
    expect(usageError(() => parseExpiry({ expires: "2026-11-01T00:00:00Z" }, now))).toMatch(/in the past/);
    expect(usageError(() => parseExpiry({ expires: "2026-12-01", for: "7d" }, now))).toMatch(
      /give one of them/,
    );
  });
});

describe("parseShareCreate", () => {
  const options = {
    to: ["globex@members"],
    allow: ["read-pods", "logs"],
    namespace: ["shared"],
    for: "7d",
    purpose: "  help debug checkout ",
  };

  it("builds sharing.create's input", () => {
    expect(parseShareCreate({ "owner-tenant": "acme", name: "globex-debug" }, options, now)).toEqual({
      tenant: "acme",
      name: "globex-debug",
      grantees: [{ tenant: "globex", groups: ["members"] }],
      rules: [
        { namespaces: ["shared"], apiGroups: [""], resources: ["pods"], verbs: ["get", "list", "watch"] },
        { namespaces: ["shared"], apiGroups: [""], resources: ["pods/log"], verbs: ["get"] },
      ],
      expiresAt: "2026-11-28T12:00:00.000Z",
      purpose: "help debug checkout",
    });
    const { for: _, ...forever } = options;
    expect(parseShareCreate({ "owner-tenant": "acme", name: "x" }, forever, now)).not.toHaveProperty(
      "expiresAt",
    );
  });

  it("requires a purpose and good names", () => {
    const args = { "owner-tenant": "acme", name: "globex-debug" };
    expect(usageError(() => parseShareCreate(args, { ...options, purpose: undefined }, now))).toMatch(
      /^--purpose: required/,
    );
    expect(usageError(() => parseShareCreate(args, { ...options, purpose: "  " }, now))).toMatch(
      /^--purpose: required/,
    );
    expect(usageError(() => parseShareCreate({ ...args, name: "Debug!" }, options, now))).toBe(
      "<name>: expected a grant name of lowercase letters, digits and '-', starting and ending with a letter or digit",
    );
    expect(usageError(() => parseShareCreate({ ...args, name: "x".repeat(41) }, options, now))).toBe(
      "<name>: expected a grant name of at most 40 characters",
    );
    expect(usageError(() => parseShareCreate({ ...args, "owner-tenant": "ACME" }, options, now))).toMatch(
      /^<owner-tenant>: expected a tenant name/,
    );
    expect(
      usageError(() =>
        parseShareCreate(
          args,
          { ...options, namespace: Array.from({ length: 65 }, (_, i) => `ns-${i}`) },
          now,
        ),
      ),
    ).toMatch(/^--namespace: expected at most 64 namespaces/);
  });
});

describe("parseShareList and parseShareRevoke", () => {
  it("lists one owner's grants, or with --shared-with-me what others share, never both", () => {
    expect(parseShareList({ "owner-tenant": "acme" }, {})).toEqual({ sharedWithMe: false, tenant: "acme" });
    expect(parseShareList({}, { "shared-with-me": true })).toEqual({ sharedWithMe: true });
    expect(usageError(() => parseShareList({}, {}))).toMatch(
      /^<owner-tenant>: required \(whose grants to list\), or --shared-with-me/,
    );
    expect(usageError(() => parseShareList({ "owner-tenant": "acme" }, { "shared-with-me": true }))).toMatch(
      /^--shared-with-me: .*leave out <owner-tenant>/,
    );
    expect(usageError(() => parseShareList({ "owner-tenant": "Acme" }, {}))).toMatch(
      /^<owner-tenant>: expected a tenant name/,
    );
  });

  it("revokes by short or full name", () => {
    expect(parseShareRevoke({ "owner-tenant": "acme", name: "globex-debug" })).toEqual({
      tenant: "acme",
      name: "globex-debug",
    });
    expect(parseShareRevoke({ "owner-tenant": "acme", name: "acme.globex-debug" })).toEqual({
      tenant: "acme",
      name: "acme.globex-debug",
    });
    expect(usageError(() => parseShareRevoke({ "owner-tenant": "acme", name: "Bad Name" }))).toBe(
      "<name>: expected a grant name",
    );
  });
});

describe("rendering grants", () => {
  it("spells grantees as --to takes them and rules as kubectl names resources", () => {
    expect(describeGrantee({ tenant: "globex" })).toBe("globex");
    expect(describeGrantee({ tenant: "globex", users: ["alice", "bob"], groups: ["admins"] })).toBe(
      "globex:alice,bob@admins",
    );
    expect(
      describeRule({
        namespaces: ["shared", "dev"],
        apiGroups: ["apps"],
        resources: ["deployments", "deployments/scale"],
        resourceNames: ["web"],
        verbs: ["get", "patch"],
      }),
    ).toBe("get,patch deployments.apps,deployments/scale.apps named web in shared,dev");
  });

  it("lists grants as a table", () => {
    const grants: GrantSummaryView[] = [
      {
        name: "acme-globex-debug",
        shortName: "globex-debug",
        grantees: [{ tenant: "globex", groups: ["members"] }],
        rules: [
          { namespaces: ["shared"], apiGroups: [""], resources: ["pods"], verbs: ["get", "list", "watch"] },
          { namespaces: ["shared"], apiGroups: [""], resources: ["pods/log"], verbs: ["get"] },
        ],
        expiresAt: "2026-11-28T12:00:00.000Z",
        state: "Active",
        lastUsedAt: "2026-11-21T11:55:00.000Z",
      },
      {
        name: "acme-ops",
        shortName: "ops",
        grantees: [{ tenant: "initech", users: ["carol"] }, { tenant: "hooli" }],
        rules: [
          { namespaces: ["prod"], apiGroups: [""], resources: ["pods/exec"], verbs: ["create", "get"] },
        ],
        expiresAt: null,
        state: "PendingApproval",
        lastUsedAt: null,
      },
    ];
    expect(renderTable(grants, grantColumns(now))).toBe(
      [
        "NAME           GRANTEES               WHAT                                                    EXPIRES                STATE             LAST USED",
        "globex-debug   globex@members         get,list,watch pods in shared; get pods/log in shared   2026-11-28T12:00:00Z   Active            5m ago",
        "ops            initech:carol, hooli   create,get pods/exec in prod                            never                  PendingApproval   never",
        "",
      ].join("\n"),
    );
  });

  it("lists what others share with me, by the owner's display name", () => {
    const rows: SharedGrantRow[] = [
      {
        owner: "acme",
        ownerDisplayName: "Acme Corp",
        shortName: "globex-debug",
        purpose: "debug\ncheckout",
        expiresAt: "2026-11-28T12:00:00.000Z",
        rules: [
          {
            namespaces: ["shared"],
            apiGroups: [""],
            resources: ["pods/log"],
            resourceNames: [],
            verbs: ["get"],
          },
        ],
      },
    ];
    expect(renderTable(rows, sharedWithMeColumns())).toBe(
      [
        "OWNER              GRANT          WHAT                     EXPIRES                PURPOSE",
        "Acme Corp (acme)   globex-debug   get pods/log in shared   2026-11-28T12:00:00Z   debug checkout",
        "",
      ].join("\n"),
    );
  });
});

describe("share commands", () => {
  const io = {
    env: { RING0_URL: "http://ring0.test", RING0_TOKEN: `r0_${"a".repeat(43)}`, HOME: "/nonexistent" },
    readStdin: async () => null,
    now: () => now,
    fetch: (() => {
      throw new Error("no call expected");
    }) as unknown as typeof fetch,
  };

  it("refuses bad input before calling Ring0", async () => {
    const create = {
      command: "share create" as const,
      args: { "owner-tenant": "acme", name: "debug" },
      global: { output: "table" as const },
    };
    await expect(
      runCommand({ ...create, options: { to: ["globex"], allow: ["logs"], namespace: ["shared"] } }, io),
    ).rejects.toThrow(/^--purpose: required/);
    await expect(
      runCommand(
        {
          ...create,
          options: { to: ["globex"], allow: ["logs"], namespace: ["shared"], for: "soon", purpose: "x" },
        },
        io,
      ),
    ).rejects.toThrow(/^--for "soon": expected a duration/);
    await expect(
      runCommand({ command: "share list", args: {}, options: {}, global: { output: "table" } }, io),
    ).rejects.toThrow(UsageError);
  });
});
