import { describe, expect, it } from "vitest";
import { age, render, renderJson, renderTable } from "./output";

interface Row {
  name: string;
  phase: string | null;
  at: Date;
}

const rows: Row[] = [
  { name: "acme", phase: "Ready", at: new Date("2030-01-02T03:04:05.678Z") },
  { name: "globex-corp", phase: null, at: new Date("2030-01-03T00:00:00Z") },
];
const columns = [
  { header: "NAME", value: (row: Row) => row.name },
  { header: "PHASE", value: (row: Row) => row.phase },
  { header: "CREATED", value: (row: Row) => row.at },
];

describe("output", () => {
  it("aligns tables kubectl-style, with '-' for empty cells and ISO dates", () => {
    expect(renderTable(rows, columns)).toBe(
      [
        "NAME          PHASE   CREATED",
        "acme          Ready   2030-01-02T03:04:05Z",
        "globex-corp   -       2030-01-03T00:00:00Z",
        "",
      ].join("\n"),
    );
    expect(renderTable([], columns)).toBe("NAME   PHASE   CREATED\n");
  });

  it("keeps a cell on one line", () => {
    expect(renderTable([{ name: "a\nb", phase: "x", at: rows[0]!.at }], columns)).toContain("a b   ");
  });

  it("prints JSON for scripts", () => {
    expect(JSON.parse(render("json", rows, columns))).toEqual([
      { name: "acme", phase: "Ready", at: "2030-01-02T03:04:05.678Z" },
      { name: "globex-corp", phase: null, at: "2030-01-03T00:00:00.000Z" },
    ]);
    expect(renderJson({ a: 1 })).toBe('{\n  "a": 1\n}\n');
  });

  it("shows ages as kubectl does", () => {
    const now = new Date("2030-01-10T00:00:00Z");
    expect(age(new Date("2030-01-09T23:59:30Z"), now)).toBe("30s");
    expect(age(new Date("2030-01-09T23:30:00Z"), now)).toBe("30m");
    expect(age(new Date("2030-01-09T12:00:00Z"), now)).toBe("12h");
    expect(age("2030-01-07T00:00:00Z", now)).toBe("3d");
    expect(age(null, now)).toBe("-");
  });
});
