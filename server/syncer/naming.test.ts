import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  assertUniquePrefixes,
  isDnsLabel,
  MAX_LITERAL_NAMESPACE_LENGTH,
  naming,
  PREFIX_LENGTH,
  prefixRefusals,
  superNamespace,
  tenantPrefix,
} from "./naming";

const letters = "abcdefghijklmnopqrstuvwxyz";
const labelCharacters = [...`${letters}0123456789-`];

/** A DNS-1123 label of exactly `length` characters. */
function labelOfLength(length: number, startWithLetter: boolean): fc.Arbitrary<string> {
  return fc
    .string({ unit: fc.constantFrom(...labelCharacters), minLength: length, maxLength: length })
    .filter((value) => isDnsLabel(value) && (!startWithLetter || letters.includes(value[0]!)));
}

/** Lengths drawn uniformly, with the boundary around the literal/hashed switch drawn often. */
function label(maxLength: number, startWithLetter = false): fc.Arbitrary<string> {
  const boundary = fc.integer({
    min: Math.min(maxLength, MAX_LITERAL_NAMESPACE_LENGTH - 2),
    max: Math.min(maxLength, MAX_LITERAL_NAMESPACE_LENGTH + 2),
  });
  return fc
    .oneof(fc.integer({ min: 1, max: maxLength }), boundary)
    .chain((length) => labelOfLength(length, startWithLetter));
}

const tenant = label(40, true);
const namespace = label(63);
/** Long namespaces sharing their first 40 characters: all hashed, with equal readable heads. */
const sharedHead = "team-platform-observability-prometheus-x";
const namespaceWithSharedHead = fc
  .integer({ min: 0, max: 63 - sharedHead.length - 1 })
  .chain((length) => (length === 0 ? fc.constant("") : labelOfLength(length, false)))
  .map((tail) => `${sharedHead}${tail ? `-${tail}` : "a"}`.slice(0, 63).replace(/-+$/, "z"));

const pair = fc.tuple(tenant, fc.oneof(namespace, namespaceWithSharedHead));

describe("super-cluster namespace names (properties)", () => {
  it("are always valid DNS-1123 labels of at most 63 characters", () => {
    fc.assert(
      fc.property(pair, ([t, ns]) => {
        const name = superNamespace(t, ns);
        expect(name.length).toBeLessThanOrEqual(63);
        expect(isDnsLabel(name)).toBe(true);
      }),
      { numRuns: 2_000 },
    );
  });

  it("never map distinct (tenant, namespace) pairs to the same name", () => {
    // A few tenants per run, so the same tenant with many namespaces is exercised as well.
    const pairs = fc.array(tenant, { minLength: 1, maxLength: 4 }).chain((tenants) =>
      fc.uniqueArray(fc.tuple(fc.constantFrom(...tenants), fc.oneof(namespace, namespaceWithSharedHead)), {
        minLength: 2,
        maxLength: 60,
        selector: ([t, ns]) => `${t}\u0000${ns}`,
      }),
    );
    fc.assert(
      fc.property(pairs, (list) => {
        fc.pre(assertUniquePrefixes(list.map(([t]) => t)).length === 0);
        const seen = new Map<string, string>();
        for (const [t, ns] of list) {
          const name = superNamespace(t, ns);
          const key = `${t}/${ns}`;
          expect(seen.get(name) ?? key).toBe(key);
          seen.set(name, key);
        }
      }),
      { numRuns: 1_000 },
    );
  });

  it("tell two namespaces of one tenant apart, however alike they are", () => {
    fc.assert(
      fc.property(tenant, namespace, namespace, (t, a, b) => {
        fc.pre(a !== b);
        expect(superNamespace(t, a)).not.toBe(superNamespace(t, b));
      }),
      { numRuns: 2_000 },
    );
  });

  it("are deterministic and start with the tenant's fixed-length prefix", () => {
    fc.assert(
      fc.property(pair, ([t, ns]) => {
        const prefix = tenantPrefix(t);
        expect(prefix).toMatch(/^t[0-9a-v]{8}$/);
        expect(prefix).toHaveLength(PREFIX_LENGTH);
        expect(superNamespace(t, ns)).toBe(superNamespace(t, ns));
        expect(superNamespace(t, ns).startsWith(`${prefix}-`)).toBe(true);
      }),
    );
  });
});

describe("super-cluster namespace names (examples)", () => {
  it("are pinned: changing the scheme would orphan every synced object", () => {
    expect(tenantPrefix("acme")).toBe("tg8lj7bc7");
    expect(superNamespace("acme", "kube-system")).toBe("tg8lj7bc7-kube-system");
    expect(superNamespace("acme", "a".repeat(63))).toBe(
      "tg8lj7bc7-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa-fkv7982tfmolnjia",
    );
  });

  it("keep kube-system and default readable and separate per tenant", () => {
    expect(superNamespace("acme", "kube-system")).toBe(`${tenantPrefix("acme")}-kube-system`);
    expect(superNamespace("globex", "kube-system")).toBe(`${tenantPrefix("globex")}-kube-system`);
    expect(superNamespace("acme", "kube-system")).not.toBe(superNamespace("globex", "kube-system"));
    expect(superNamespace("acme", "default")).toBe(`${tenantPrefix("acme")}-default`);
  });

  it("keep a namespace of 52 characters literally and fill all 63 characters", () => {
    const ns = `n${"x".repeat(MAX_LITERAL_NAMESPACE_LENGTH - 1)}`;
    expect(ns).toHaveLength(52);
    expect(superNamespace("acme", ns)).toBe(`${tenantPrefix("acme")}-${ns}`);
    expect(superNamespace("acme", ns)).toHaveLength(62);
  });

  it("hash namespaces of 53 to 63 characters to exactly 63, keeping the first 36 readable", () => {
    for (const length of [53, 54, 62, 63]) {
      const ns = `n${"x".repeat(length - 1)}`;
      const name = superNamespace("acme", ns);
      expect(name).toHaveLength(63);
      expect(isDnsLabel(name)).toBe(true);
      expect(name.startsWith(`${tenantPrefix("acme")}-${ns.slice(0, 36)}-`)).toBe(true);
    }
  });

  it("separate a 52-character namespace from its 53-character extension and from a lookalike of the hash", () => {
    const short = "a".repeat(52);
    const long = `${short}b`;
    const hashed = superNamespace("acme", long);
    const hashedRest = hashed.slice(PREFIX_LENGTH + 1);
    expect(superNamespace("acme", short)).not.toBe(hashed);
    // The hashed rest is 53 characters, so no namespace that is kept literally can reproduce it.
    expect(hashedRest).toHaveLength(53);
    expect(superNamespace("acme", hashedRest)).not.toBe(hashed);
  });

  it("separate long namespaces that differ only after the readable head", () => {
    const head = "x".repeat(60);
    expect(superNamespace("acme", `${head}abc`)).not.toBe(superNamespace("acme", `${head}abd`));
  });

  it("still give a valid, distinct name for input Kubernetes would never accept", () => {
    for (const ns of ["", "Kube_System", "-leading", "İ".repeat(40), "a".repeat(500)]) {
      const name = superNamespace("acme", ns);
      expect(isDnsLabel(name), ns).toBe(true);
      expect(name).toHaveLength(63);
    }
    expect(superNamespace("acme", "Kube_System")).not.toBe(superNamespace("acme", "kube-system"));
  });

  it("are exposed through the Naming contract", () => {
    expect(naming.superNamespace("acme", "web")).toBe(superNamespace("acme", "web"));
    expect(naming.tenantPrefix("acme")).toBe(tenantPrefix("acme"));
  });
});

describe("assertUniquePrefixes", () => {
  it("reports nothing for distinct tenants (and ignores repeats of one tenant)", () => {
    expect(assertUniquePrefixes(["acme", "globex", "initech", "acme"])).toEqual([]);
  });

  it("reports each group of tenants whose prefixes collide", () => {
    const prefixOf = (tenant: string) => `t${tenant.length.toString().padStart(8, "0")}`;
    expect(assertUniquePrefixes(["acme", "abcd", "globex", "hooli", "zeta", "unique-one"], prefixOf)).toEqual(
      [{ prefix: "t00000004", tenants: ["abcd", "acme", "zeta"] }],
    );
  });
});

describe("prefixRefusals: the tenants the syncer refuses for a colliding prefix", () => {
  it("refuses no one when every prefix is unique", () => {
    expect(prefixRefusals([{ name: "acme" }, { name: "globex" }]).size).toBe(0);
  });

  it("lets the oldest tenant of a group keep the prefix and refuses the others, naming it", () => {
    const prefixOf = (tenant: string) => `t${tenant.length.toString().padStart(8, "0")}`;
    const refusals = prefixRefusals(
      [
        { name: "acme", createdAt: "2026-03-01T00:00:00Z" },
        { name: "abcd", createdAt: "2026-01-01T00:00:00Z" },
        { name: "zeta", createdAt: new Date("2026-02-01T00:00:00Z") },
        { name: "globex", createdAt: "2026-01-01T00:00:00Z" },
      ],
      prefixOf,
    );
    expect(Object.fromEntries(refusals)).toEqual({
      acme: { prefix: "t00000004", owner: "abcd" },
      zeta: { prefix: "t00000004", owner: "abcd" },
    });
  });

  it("breaks a tie by name, and puts tenants of unknown age last", () => {
    const prefixOf = () => "t00000000";
    const refusals = prefixRefusals(
      [
        { name: "b", createdAt: "2026-01-01T00:00:00Z" },
        { name: "a", createdAt: "2026-01-01T00:00:00Z" },
        { name: "0" },
      ],
      prefixOf,
    );
    expect(Object.fromEntries(refusals)).toEqual({
      b: { prefix: "t00000000", owner: "a" },
      0: { prefix: "t00000000", owner: "a" },
    });
  });

  it("finds a real collision of the 40-bit prefix", () => {
    // Found by a birthday search over "collide-<base36>"; the syncer's integration suite uses the pair.
    expect(tenantPrefix("collide-37er")).toBe(tenantPrefix("collide-z9nw"));
    const refusals = prefixRefusals([
      { name: "collide-z9nw", createdAt: "2026-01-02T00:00:00Z" },
      { name: "collide-37er", createdAt: "2026-01-01T00:00:00Z" },
    ]);
    expect(refusals.get("collide-z9nw")).toEqual({
      prefix: tenantPrefix("collide-37er"),
      owner: "collide-37er",
    });
  });
});
