import { describe, expect, it } from "vitest";
import { namespaceName } from "@/server/core/namespace-name";
import { deleteNamespaceInput } from "./namespaces.schema";

const message = (value: unknown) => namespaceName.safeParse(value).error?.issues[0]?.message;

describe("namespace names", () => {
  it("accepts DNS-1123 labels up to 63 characters", () => {
    for (const name of ["web", "a", "team-1", "0ops", "a".repeat(63)])
      expect(namespaceName.parse(name)).toBe(name);
  });

  it("refuses anything else, saying what a valid name looks like", () => {
    for (const name of ["Web", "web_app", "-web", "web-", "web.app", "wéb"])
      expect(message(name)).toMatch(/^expected a DNS-1123 label/);
    expect(message("")).toBe("expected a namespace name");
    expect(message("a".repeat(64))).toBe("expected at most 63 characters");
    expect(message(42)).toBe("expected a namespace name");
  });

  it("needs the name typed again to delete", () => {
    const refused = deleteNamespaceInput.safeParse({ tenant: "acme", name: "web", confirm: "wbe" });
    expect(refused.error?.issues[0]).toMatchObject({
      path: ["confirm"],
      message: "expected the namespace's name, typed exactly, to confirm",
    });
    expect(deleteNamespaceInput.parse({ tenant: "acme", name: "web", confirm: "web" }).name).toBe("web");
  });
});
