"use client";

import { useMutation, useQueryClient, useSuspenseQuery } from "@tanstack/react-query";
import Link from "next/link";
import { useState } from "react";
import { useTRPC } from "@/components/trpc/client";
import { EmptyState } from "@/components/ui/empty-state";
import { toast } from "@/components/ui/toast";
import { GrantSummaryCells } from "./grant-state-badge";
import { stateLabel } from "./grant-text";
import { RevokeButton } from "./owner-grants";
import styles from "./sharing.module.css";

const states = ["Active", "PendingApproval", "Expired", "Revoked"] as const;

/** Every grant in the super cluster, filtered by state and owner; operators approve and revoke. */
export function OperatorGrants() {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const { data: grants } = useSuspenseQuery(trpc.sharing.operator.list.queryOptions({}));
  const [state, setState] = useState("");
  const [owner, setOwner] = useState("");
  const [error, setError] = useState<string | null>(null);
  const refresh = () => queryClient.invalidateQueries({ queryKey: trpc.sharing.pathKey() });
  const onError = (failure: { message: string }) => setError(failure.message);

  const approve = useMutation(
    trpc.sharing.operator.approve.mutationOptions({
      onSuccess: (grant) => {
        toast(`Grant "${grant.name}" approved.`);
        setError(null);
        void refresh();
      },
      onError,
    }),
  );
  const revoke = useMutation(
    trpc.sharing.operator.revoke.mutationOptions({
      onSuccess: (grant) => {
        toast(`Grant "${grant.name}" revoked.`);
        setError(null);
        void refresh();
      },
      onError,
    }),
  );

  const owners = [...new Set(grants.map((grant) => grant.owner))].sort();
  const shown = grants.filter(
    (grant) => (!state || grant.state === state) && (!owner || grant.owner === owner),
  );
  const pending = grants.filter((grant) => grant.state === "PendingApproval").length;

  return (
    <>
      <form className="toolbar" aria-label="Filter grants" onSubmit={(event) => event.preventDefault()}>
        <label className="field">
          State
          <select value={state} onChange={(event) => setState(event.target.value)} data-testid="filter-state">
            <option value="">Any</option>
            {states.map((value) => (
              <option key={value} value={value}>
                {stateLabel[value]}
              </option>
            ))}
          </select>
        </label>
        <label className="field">
          Owner
          <select value={owner} onChange={(event) => setOwner(event.target.value)} data-testid="filter-owner">
            <option value="">Any</option>
            {owners.map((value) => (
              <option key={value} value={value}>
                {value}
              </option>
            ))}
          </select>
        </label>
        <span className={styles.muted}>
          {shown.length} of {grants.length} grants; {pending} waiting for approval
        </span>
      </form>
      {error ? (
        <p className="alert alert-error" role="alert" data-testid="grant-error">
          {error}
        </p>
      ) : null}
      {shown.length === 0 ? (
        <EmptyState title="No grants">
          <p>{grants.length === 0 ? "No tenant shares anything." : "No grant matches the filters."}</p>
        </EmptyState>
      ) : (
        <table className="data" aria-label="Grants" data-testid="grants-table">
          <thead>
            <tr>
              <th scope="col">Owner</th>
              <th scope="col">Name</th>
              <th scope="col">Shared with</th>
              <th scope="col">What</th>
              <th scope="col">Expires</th>
              <th scope="col">State</th>
              <th scope="col">Last used</th>
              <th scope="col">
                <span className="sr-only">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {shown.map((grant) => (
              <tr key={grant.name} data-testid={`grant-row-${grant.shortName}`} data-owner={grant.owner}>
                <td>
                  {grant.ownerDisplayName}
                  {grant.ownerDisplayName !== grant.owner ? (
                    <div className={styles.muted}>{grant.owner}</div>
                  ) : null}
                </td>
                <th scope="row">
                  <Link href={`/t/${grant.owner}/sharing/${grant.shortName}`}>{grant.shortName}</Link>
                  <div className={styles.muted}>{grant.purpose}</div>
                  {grant.requestedBy ? <div className={styles.muted}>by {grant.requestedBy}</div> : null}
                </th>
                <GrantSummaryCells grant={grant} />
                <td>
                  <span className="toolbar" style={{ marginBottom: 0 }}>
                    {grant.state === "PendingApproval" ? (
                      <button
                        type="button"
                        className="button button-primary"
                        disabled={approve.isPending}
                        onClick={() => approve.mutate({ name: grant.name })}
                        aria-label={`Approve ${grant.name}`}
                        data-testid={`grant-approve-${grant.shortName}`}
                      >
                        Approve
                      </button>
                    ) : null}
                    {grant.state === "Revoked" ? null : (
                      <RevokeButton
                        grant={grant}
                        pending={revoke.isPending}
                        onRevoke={() => revoke.mutate({ name: grant.name })}
                      />
                    )}
                  </span>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </>
  );
}
