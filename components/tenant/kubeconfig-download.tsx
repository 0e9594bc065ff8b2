import Link from "next/link";

const expiries = [1, 7, 30, 90];

/**
 * "Download kubeconfig": a plain form POST, so the browser saves the attachment the route answers
 * with (no script involved, and the Origin check of the route applies).
 */
export function KubeconfigDownload({ tenant }: { tenant: string }) {
  return (
    <section className="card" aria-label="Kubeconfig" style={{ marginBottom: "1.25rem" }}>
      <h2>kubectl access</h2>
      <form
        method="post"
        action={`/api/tenants/${encodeURIComponent(tenant)}/kubeconfig`}
        className="toolbar"
        aria-label="Download kubeconfig"
      >
        <label className="field">
          Expires after
          <select name="expiresInDays" defaultValue="7">
            {expiries.map((days) => (
              <option key={days} value={days}>
                {days === 1 ? "1 day" : `${days} days`}
              </option>
            ))}
          </select>
        </label>
        <button type="submit" className="button button-primary">
          Download kubeconfig
        </button>
      </form>
      <p>
        The file holds a new API token of yours for tenant {tenant} and points kubectl at Ring0's kube
        gateway. Use it with:
      </p>
      <pre>
        <code>kubectl --kubeconfig {tenant}.kubeconfig get ns</code>
      </pre>
      <p>
        Each download creates a token named "kubeconfig &lt;date&gt;"; revoke one under{" "}
        <Link href={`/t/${tenant}/tokens`}>API tokens</Link> to cut that file off.
      </p>
    </section>
  );
}
