/** How commands print: aligned tables for people (default), JSON for scripts (`-o json`). */
export const outputFormats = ["table", "json"] as const;
export type OutputFormat = (typeof outputFormats)[number];

export interface Column<Row> {
  header: string;
  value: (row: Row) => string | number | boolean | Date | null | undefined;
}

function cell(value: string | number | boolean | Date | null | undefined): string {
  if (value === null || value === undefined || value === "") return "-";
  if (value instanceof Date) return value.toISOString().replace(/\.\d{3}Z$/, "Z");
  return String(value).replace(/\s+/g, " ");
}

/** kubectl-style: upper-case headers, columns separated by three spaces, no trailing blanks. */
export function renderTable<Row>(rows: readonly Row[], columns: readonly Column<Row>[]): string {
  const grid = [
    columns.map((column) => column.header),
    ...rows.map((row) => columns.map((c) => cell(c.value(row)))),
  ];
  const widths = columns.map((_, index) => Math.max(...grid.map((line) => line[index]!.length)));
  return `${grid
    .map((line) =>
      line
        .map((text, index) => (index === line.length - 1 ? text : text.padEnd(widths[index]!)))
        .join("   ")
        .trimEnd(),
    )
    .join("\n")}\n`;
}

/** Dates as ISO strings, two-space indent, a final newline. */
export function renderJson(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}

export function render<Row>(
  format: OutputFormat,
  rows: readonly Row[],
  columns: readonly Column<Row>[],
): string {
  return format === "json" ? renderJson(rows) : renderTable(rows, columns);
}

/** "3d", "5h", "12m", "40s" — how long ago, as kubectl shows ages. */
export function age(from: Date | string | null | undefined, now: Date = new Date()): string {
  if (!from) return "-";
  const seconds = Math.max(0, Math.floor((now.getTime() - new Date(from).getTime()) / 1000));
  if (seconds < 120) return `${seconds}s`;
  if (seconds < 7200) return `${Math.floor(seconds / 60)}m`;
  if (seconds < 172_800) return `${Math.floor(seconds / 3600)}h`;
  return `${Math.floor(seconds / 86_400)}d`;
}
