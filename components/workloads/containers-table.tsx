/** A pod's containers (name, image, ready, restarts, state and its detail): tenant and super-cluster pod pages. */
export interface ContainerSummary {
  name: string;
  image: string;
  ready: boolean;
  restarts: number;
  state: string;
  detail?: string | null;
}

export function ContainersSection({
  id,
  containers,
}: {
  id: string;
  containers: readonly ContainerSummary[];
}) {
  return (
    <section aria-labelledby={id} style={{ marginTop: "1.5rem" }}>
      <h2 id={id}>Containers</h2>
      <table className="data" aria-label="Containers">
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Image</th>
            <th scope="col">Ready</th>
            <th scope="col">Restarts</th>
            <th scope="col">State</th>
          </tr>
        </thead>
        <tbody>
          {containers.map((container) => (
            <tr key={container.name}>
              <td>{container.name}</td>
              <td>
                <code>{container.image}</code>
              </td>
              <td>{container.ready ? "Yes" : "No"}</td>
              <td>{container.restarts}</td>
              <td>
                {container.state}
                {container.detail ? <span className="whoami-meta"> ({container.detail})</span> : null}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}
