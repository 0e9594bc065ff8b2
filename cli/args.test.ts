import { describe, expect, it } from "vitest";
import { helpText, parseCommandLine } from "./args";
import { UsageError } from "./errors";

function usageError(argv: string[]): string {
  try {
    parseCommandLine(argv);
  } catch (error) {
    expect(error).toBeInstanceOf(UsageError);
    expect((error as UsageError).exitCode).toBe(2);
    return (error as Error).message;
  }
  throw new Error(`expected a usage error for ${argv.join(" ")}`);
}

describe("parseCommandLine", () => {
  it("reads two-word commands, positionals, repeated flags and global options anywhere", () => {
    expect(
      parseCommandLine([
        "-o",
        "json",
        "tenants",
        "create",
        "acme2",
        "--display-name",
        "Acme Two",
        "--admin",
        "alice",
        "--admin=bob",
        "--url",
        "http://r.test",
      ]),
    ).toEqual({
      kind: "command",
      command: "tenants create",
      args: { name: "acme2" },
      options: { "display-name": "Acme Two", admin: ["alice", "bob"] },
      global: { output: "json", url: "http://r.test", token: undefined },
    });
    expect(parseCommandLine(["tokens", "list"])).toMatchObject({
      command: "tokens list",
      global: { output: "table" },
    });
    expect(parseCommandLine(["tenants", "delete", "acme", "--yes"])).toMatchObject({
      args: { name: "acme" },
      options: { yes: true },
    });
    expect(parseCommandLine(["quota", "default-share", "acme", "cpu=500m", "pods=5"])).toMatchObject({
      command: "quota default-share",
      args: { tenant: "acme" },
      rest: ["cpu=500m", "pods=5"],
    });
    expect(parseCommandLine(["quota", "default-share", "acme", "--clear"])).toMatchObject({
      options: { clear: true },
    });
  });

  it("gives kubeconfig's -o the meaning of an output file", () => {
    expect(parseCommandLine(["kubeconfig", "acme", "-o", "acme.yaml", "--expires-in-days", "7"])).toEqual({
      kind: "command",
      command: "kubeconfig",
      args: { tenant: "acme" },
      options: { "expires-in-days": "7" },
      global: { output: "table", url: undefined, token: undefined },
      outputFile: "acme.yaml",
    });
  });

  it("answers --help for the tool, a group and each command", () => {
    expect(parseCommandLine(["--help"])).toMatchObject({
      kind: "help",
      text: expect.stringContaining("Commands:"),
    });
    expect(parseCommandLine(["help"])).toMatchObject({ kind: "help" });
    const group = parseCommandLine(["tokens", "--help"]);
    expect(group.kind === "help" && group.text).toMatch(/tokens revoke <id>/);
    expect(group.kind === "help" && group.text).not.toMatch(/tenants create/);
    const command = parseCommandLine(["tenants", "create", "-h"]);
    expect(command.kind === "help" && command.text).toMatch(/Usage: ring0 tenants create <name> \[options\]/);
    expect(command.kind === "help" && command.text).toMatch(/--display-name <text>/);
    expect(helpText("kubeconfig")).toMatch(/-o, --output <file>/);
  });

  it("refuses what it does not understand, saying what to do", () => {
    expect(usageError([])).toMatch(/expected a command/);
    expect(usageError(["frobnicate"])).toMatch(/unknown command "frobnicate"/);
    expect(usageError(["tenants"])).toMatch(/expected a tenants command: list, create, delete/);
    expect(usageError(["tenants", "explode"])).toMatch(/unknown command "tenants explode"/);
    expect(usageError(["tenants", "list", "--bogus"])).toMatch(/--bogus/);
    expect(usageError(["tenants", "list", "--yes"])).toMatch(/ring0 tenants list does not take --yes/);
    expect(usageError(["kubeconfig"])).toMatch(/^tenant: required/);
    expect(usageError(["tokens", "revoke", "a", "b"])).toMatch(/unexpected argument "b"/);
    expect(usageError(["tokens", "list", "-o", "yaml"])).toMatch(/-o\/--output: expected one of table, json/);
  });

  it("reads quota set's resource=quantity arguments after the tenant, with its flags", () => {
    expect(
      parseCommandLine([
        "quota",
        "set",
        "acme",
        "requests.cpu=2",
        "--template",
        "small",
        "pods=-1",
        "--allow-below-usage",
      ]),
    ).toEqual({
      kind: "command",
      command: "quota set",
      args: { tenant: "acme" },
      options: { template: "small", "allow-below-usage": true },
      global: { output: "table", url: undefined, token: undefined },
      rest: ["requests.cpu=2", "pods=-1"],
    });
    expect(parseCommandLine(["quota", "get", "acme", "-o", "json"])).toMatchObject({
      command: "quota get",
      args: { tenant: "acme" },
    });
    expect(usageError(["quota", "get", "acme", "pods=1"])).toMatch(/unexpected argument "pods=1"/);
    expect(usageError(["quota", "get", "acme", "--template", "x"])).toMatch(/does not take --template/);
    const help = parseCommandLine(["quota", "set", "--help"]);
    expect(help.kind === "help" && help.text).toMatch(
      /Usage: ring0 quota set <tenant> \[<resource=quantity> \.\.\.\] \[options\]/,
    );
  });
});

describe("ring0 share", () => {
  it("reads share create's positionals and repeated flags", () => {
    expect(
      parseCommandLine([
        "share",
        "create",
        "acme",
        "globex-debug",
        "--to",
        "globex@members",
        "--to=initech:alice",
        "--allow",
        "read-pods",
        "--allow",
        "get:pods/log",
        "-n",
        "shared",
        "--namespace",
        "dev",
        "--for",
        "7d",
        "--purpose",
        "debug checkout",
      ]),
    ).toEqual({
      kind: "command",
      command: "share create",
      args: { "owner-tenant": "acme", name: "globex-debug" },
      options: {
        to: ["globex@members", "initech:alice"],
        allow: ["read-pods", "get:pods/log"],
        namespace: ["shared", "dev"],
        for: "7d",
        purpose: "debug checkout",
      },
      global: { output: "table", url: undefined, token: undefined },
    });
    expect(usageError(["share", "create", "acme"])).toMatch(/^name: required/);
    expect(usageError(["share", "revoke", "acme", "x", "y"])).toMatch(/unexpected argument "y"/);
    expect(usageError(["share", "list", "--to", "globex"])).toMatch(/ring0 share list does not take --to/);
    expect(usageError(["share"])).toMatch(/expected a share command: create, list, revoke/);
  });

  it("takes share list's owner tenant as optional (--shared-with-me lists without one)", () => {
    expect(parseCommandLine(["share", "list", "acme", "-o", "json"])).toMatchObject({
      command: "share list",
      args: { "owner-tenant": "acme" },
      options: {},
      global: { output: "json" },
    });
    expect(parseCommandLine(["share", "list", "--shared-with-me"])).toMatchObject({
      args: {},
      options: { "shared-with-me": true },
    });
    expect(usageError(["share", "list", "acme", "globex"])).toMatch(/unexpected argument "globex"/);
    const help = parseCommandLine(["share", "list", "--help"]);
    expect(help.kind === "help" && help.text).toMatch(
      /Usage: ring0 share list \[<owner-tenant>\] \[options\]/,
    );
    const create = parseCommandLine(["share", "create", "--help"]);
    expect(create.kind === "help" && create.text).toMatch(/-n, --namespace <namespace>/);
    const group = parseCommandLine(["share", "--help"]);
    expect(group.kind === "help" && group.text).toMatch(/share revoke <owner-tenant> <name>/);
  });
});
