import type { ReactNode } from "react";

/** One column of a table: its header and what each row shows in it. */
export interface Column<Row> {
  header: ReactNode;
  cell: (row: Row) => ReactNode;
}

/** The header of a column of per-row buttons: read by screen readers, not shown. */
export const actionsHeader = <span className="sr-only">Actions</span>;

/** A table of records, one row each, in the columns the view asks for (conditional ones left out by it). */
export function DataTable<Row>({
  label,
  rows,
  columns,
  rowKey,
  rowTestId,
}: {
  label: string;
  rows: readonly Row[];
  columns: readonly Column<Row>[];
  rowKey: (row: Row) => string;
  rowTestId?: (row: Row) => string;
}) {
  return (
    <table className="data" aria-label={label}>
      <thead>
        <tr>
          {columns.map((column, index) => (
            // biome-ignore lint/suspicious/noArrayIndexKey: a view's columns are fixed
            <th key={index} scope="col">
              {column.header}
            </th>
          ))}
        </tr>
      </thead>
      <tbody>
        {rows.map((row) => (
          <tr key={rowKey(row)} data-testid={rowTestId?.(row)}>
            {columns.map((column, index) => (
              // biome-ignore lint/suspicious/noArrayIndexKey: a view's columns are fixed
              <td key={index}>{column.cell(row)}</td>
            ))}
          </tr>
        ))}
      </tbody>
    </table>
  );
}
