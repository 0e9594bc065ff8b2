/** The pod table renders the columns it is given, with its links and row test ids. */
import { renderToString } from "react-dom/server";
import { expect, it } from "vitest";
import { PodTable, podColumns } from "./pod-table";

const pods = [
  { namespace: "default", name: "web-1", phase: "Running", ready: "1/1", restarts: 2, createdAt: null },
  { namespace: "team", name: "db", phase: "Pending", ready: "0/1", restarts: 0, createdAt: null },
];

it("renders a header and a cell per column, linking each pod's name", () => {
  const html = renderToString(
    <PodTable
      label="Pods"
      pods={pods}
      rowTestId={(pod) => `pod-row-${pod.name}`}
      columns={[
        podColumns.namespace,
        podColumns.name((pod) => `/pods/${pod.namespace}/${pod.name}`),
        { header: "Phase", cell: (pod) => pod.phase },
        podColumns.ready,
        podColumns.restarts,
        podColumns.age,
      ]}
    />,
  );
  expect(html).toContain('<table class="data" aria-label="Pods">');
  expect(html.match(/<th scope="col">/g)).toHaveLength(6);
  expect(html).toContain(
    '<tr data-testid="pod-row-web-1"><td>default</td><td><a href="/pods/default/web-1">web-1</a></td>',
  );
  expect(html).toContain("<td>Pending</td><td>0/1</td><td>0</td><td>—</td>");
});

it("leaves rows without a test id when none is asked for", () => {
  const html = renderToString(<PodTable label="Pods" pods={pods} columns={[podColumns.namespace]} />);
  expect(html).not.toContain("data-testid");
  expect(html.match(/<tr>/g)).toHaveLength(3);
});
