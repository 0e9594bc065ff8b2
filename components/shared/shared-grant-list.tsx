"use client";

import { useSuspenseQuery } from "@tanstack/react-query";
import Link from "next/link";
import { accessText, expiryText, ruleText, sharesByOwner } from "@/components/shared/grant-summary";
import { SharedKubeconfigButton } from "@/components/shared/kubeconfig-button";
import { useTRPC } from "@/components/trpc/client";
import { EmptyState } from "@/components/ui/empty-state";

/** What other tenants share with the signed-in user: a card per owner, its grants, links and kubectl. */
export function SharedGrantList({ tenant }: { tenant: string }) {
  const trpc = useTRPC();
  const { data: grants } = useSuspenseQuery({
    ...trpc.sharedWithMe.list.queryOptions(),
    // Grants are revoked or expire without this page doing anything.
    refetchInterval: 15_000,
  });
  if (grants.length === 0) {
    return (
      <EmptyState title="Nothing is shared with you">
        <p>
          When another tenant shares namespaces with you (or with your tenant), they show here, with links to
          their workloads and a kubeconfig for kubectl.
        </p>
      </EmptyState>
    );
  }
  return (
    <div style={{ display: "grid", gap: "1.25rem" }}>
      {sharesByOwner(grants).map((shares) => (
        <section
          key={shares.owner}
          className="card"
          aria-label={`Shared by ${shares.ownerDisplayName}`}
          data-testid={`shared-grant-${shares.owner}`}
        >
          <h2 style={{ marginTop: 0 }}>{shares.ownerDisplayName}</h2>
          {shares.grants.map((grant) => (
            <article
              key={grant.name}
              aria-label={`Grant ${grant.shortName}`}
              data-testid={`shared-grant-${grant.owner}-${grant.shortName}`}
              style={{ marginBottom: "1rem" }}
            >
              <p style={{ margin: "0 0 0.25rem" }}>
                <strong>{grant.purpose}</strong> <span className="whoami-meta">({grant.shortName})</span>
              </p>
              <p className="whoami-meta" style={{ margin: "0 0 0.5rem" }}>
                <time dateTime={grant.expiresAt ?? undefined}>{expiryText(grant.expiresAt)}</time>
              </p>
              <table className="data" aria-label={`What grant ${grant.shortName} shares`}>
                <thead>
                  <tr>
                    <th scope="col">Namespace</th>
                    <th scope="col">In the portal you can</th>
                  </tr>
                </thead>
                <tbody>
                  {grant.namespaces.map((access) => (
                    <tr key={access.namespace}>
                      <td>{access.namespace}</td>
                      <td>{accessText(access)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
              <details>
                <summary>Rules (what kubectl may do)</summary>
                <ul>
                  {grant.rules.map((rule) => (
                    <li key={ruleText(rule)}>
                      <code>{ruleText(rule)}</code>
                    </li>
                  ))}
                </ul>
              </details>
            </article>
          ))}
          {shares.workloadNamespaces.length > 0 ? (
            <ul className="chips" aria-label="Shared workloads">
              {shares.workloadNamespaces.map((namespace) => (
                <li key={namespace}>
                  <Link
                    href={`/t/${tenant}/shared/${encodeURIComponent(shares.owner)}/${encodeURIComponent(namespace)}`}
                    data-testid={`shared-ns-link-${namespace}`}
                  >
                    Workloads in {namespace}
                  </Link>
                </li>
              ))}
            </ul>
          ) : null}
          <SharedKubeconfigButton owner={shares.owner} namespace={shares.workloadNamespaces[0]} />
        </section>
      ))}
    </div>
  );
}
