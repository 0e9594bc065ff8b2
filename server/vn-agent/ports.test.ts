import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openPortBook, vnAgentPortsFile } from "./ports";

let stateDir: string;
let file: string;

beforeEach(() => {
  stateDir = fs.mkdtempSync(path.join(os.tmpdir(), "ring0-vn-agent-ports-"));
  file = vnAgentPortsFile(stateDir);
});

afterEach(() => fs.rmSync(stateDir, { recursive: true, force: true }));

describe("the vn-agents' port book", () => {
  it("lives in the state dir", () => {
    expect(file).toBe(path.join(stateDir, "vn-agent-ports.json"));
  });

  it("starts empty without a file, and remembers what it records across reopening", () => {
    const first = openPortBook(file);
    expect(first.get("node-0")).toBeUndefined();
    first.record("node-0", 41_000);
    first.record("node-1", 41_001);
    const reopened = openPortBook(file);
    expect(reopened.entries()).toEqual({ "node-0": 41_000, "node-1": 41_001 });
  });

  it("replaces a node's port and forgets a node that is gone", () => {
    const book = openPortBook(file);
    book.record("node-0", 41_000);
    book.record("node-1", 41_001);
    book.record("node-0", 42_000);
    book.forget("node-1");
    expect(openPortBook(file).entries()).toEqual({ "node-0": 42_000 });
  });

  it("keeps only the nodes of the super cluster's node list", () => {
    const book = openPortBook(file);
    for (const [index, node] of ["a", "b", "c"].entries()) book.record(node, 41_000 + index);
    book.keepOnly(new Set(["b", "d"]));
    expect(openPortBook(file).entries()).toEqual({ b: 41_001 });
  });

  it("writes atomically: no temporary file is left beside it", () => {
    openPortBook(file).record("node-0", 41_000);
    expect(fs.readdirSync(stateDir)).toEqual(["vn-agent-ports.json"]);
    expect(JSON.parse(fs.readFileSync(file, "utf8"))).toEqual({ ports: { "node-0": 41_000 } });
  });

  it("starts afresh from a damaged file, and ignores entries that are not ports", () => {
    fs.writeFileSync(file, "{ not json");
    expect(openPortBook(file).entries()).toEqual({});
    fs.writeFileSync(
      file,
      JSON.stringify({ ports: { good: 41_000, zero: 0, big: 70_000, text: "41001", half: 1.5 } }),
    );
    expect(openPortBook(file).entries()).toEqual({ good: 41_000 });
  });
});
