"use client";

import { useMutation, useQueryClient, useSuspenseQuery } from "@tanstack/react-query";
import Link from "next/link";
import { useState } from "react";
import { useTRPC } from "@/components/trpc/client";
import { EmptyState } from "@/components/ui/empty-state";
import { toast } from "@/components/ui/toast";
import type { GrantSummary } from "@/server/sharing/resources";
import { GrantForm } from "./grant-form";
import { GrantSummaryCells } from "./grant-state-badge";
import styles from "./sharing.module.css";

/** Asks before revoking: grantees lose access at once, everywhere, and a revoked grant stays revoked. */
export function RevokeButton({
  grant,
  onRevoke,
  pending,
}: {
  grant: Pick<GrantSummary, "shortName" | "name">;
  onRevoke: () => void;
  pending: boolean;
}) {
  const [asking, setAsking] = useState(false);
  if (!asking) {
    return (
      <button
        type="button"
        className="button"
        onClick={() => setAsking(true)}
        aria-label={`Revoke ${grant.shortName}`}
        data-testid={`grant-revoke-${grant.shortName}`}
      >
        Revoke
      </button>
    );
  }
  return (
    <fieldset className={styles.confirm} aria-label={`Confirm revoking ${grant.shortName}`}>
      <span>Grantees lose access at once. Revoke?</span>
      <button
        type="button"
        className="button button-primary"
        disabled={pending}
        onClick={() => {
          onRevoke();
          setAsking(false);
        }}
        data-testid="grant-revoke-confirm"
      >
        {pending ? "Revoking…" : `Revoke ${grant.shortName}`}
      </button>
      <button type="button" className="button" onClick={() => setAsking(false)}>
        Cancel
      </button>
    </fieldset>
  );
}

/**
 * A tenant's grants to other tenants: who, what, until when, in what state, last used. Its admins
 * create, edit and revoke them here; members and viewers read.
 */
export function OwnerGrants({ tenant }: { tenant: string }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const { data } = useSuspenseQuery(trpc.sharing.list.queryOptions({ tenant }));
  const [editing, setEditing] = useState<string | null>(null);
  const [creating, setCreating] = useState(false);
  const refresh = () => queryClient.invalidateQueries({ queryKey: trpc.sharing.list.queryKey() });

  const revoke = useMutation(
    trpc.sharing.revoke.mutationOptions({
      onSuccess: (grant) => {
        toast(`Grant "${grant.shortName}" revoked.`);
        void refresh();
      },
    }),
  );
  const editingGrant = data.grants.find((grant) => grant.shortName === editing);

  return (
    <>
      {data.canChange ? (
        creating ? (
          <GrantForm
            tenant={tenant}
            onDone={() => {
              setCreating(false);
              void refresh();
            }}
            onCancel={() => setCreating(false)}
          />
        ) : (
          <p className="toolbar">
            <button
              type="button"
              className="button button-primary"
              onClick={() => setCreating(true)}
              data-testid="grant-create"
            >
              New grant
            </button>
          </p>
        )
      ) : null}

      {editingGrant ? (
        <GrantForm
          key={editingGrant.resourceVersion ?? editingGrant.name}
          tenant={tenant}
          initial={editingGrant}
          onDone={() => {
            setEditing(null);
            void refresh();
          }}
          onCancel={() => setEditing(null)}
        />
      ) : null}

      {data.grants.length === 0 ? (
        <EmptyState title="No grants">
          <p>
            Nothing of tenant {tenant} is shared. A grant gives users of another tenant exactly the verbs on
            exactly the resources and namespaces it names, until it expires or is revoked.
          </p>
        </EmptyState>
      ) : (
        <table className="data" aria-label="Grants" data-testid="grants-table">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Shared with</th>
              <th scope="col">What</th>
              <th scope="col">Expires</th>
              <th scope="col">State</th>
              <th scope="col">Last used</th>
              {data.canChange ? (
                <th scope="col">
                  <span className="sr-only">Actions</span>
                </th>
              ) : null}
            </tr>
          </thead>
          <tbody>
            {data.grants.map((grant) => (
              <tr key={grant.name} data-testid={`grant-row-${grant.shortName}`}>
                <th scope="row">
                  <Link href={`/t/${tenant}/sharing/${grant.shortName}`}>{grant.shortName}</Link>
                  <div className={styles.muted}>{grant.purpose}</div>
                </th>
                <GrantSummaryCells grant={grant} />
                {data.canChange ? (
                  <td>
                    <span className="toolbar" style={{ marginBottom: 0 }}>
                      {grant.state === "Revoked" ? null : (
                        <>
                          <button
                            type="button"
                            className="button"
                            onClick={() => setEditing(editing === grant.shortName ? null : grant.shortName)}
                            data-testid={`grant-edit-${grant.shortName}`}
                          >
                            {editing === grant.shortName ? "Cancel edit" : "Edit"}
                          </button>
                          <RevokeButton
                            grant={grant}
                            pending={revoke.isPending}
                            onRevoke={() => revoke.mutate({ tenant, name: grant.shortName })}
                          />
                        </>
                      )}
                    </span>
                  </td>
                ) : null}
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </>
  );
}
