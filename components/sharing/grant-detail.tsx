"use client";

import { useInfiniteQuery, useMutation, useQueryClient, useSuspenseQuery } from "@tanstack/react-query";
import { useRouter } from "next/navigation";
import { useState } from "react";
import { Age } from "@/components/nodes/age";
import { useTRPC } from "@/components/trpc/client";
import { ConditionsTable, conditionTone } from "@/components/ui/conditions-table";
import { EmptyState } from "@/components/ui/empty-state";
import { toast } from "@/components/ui/toast";
import { TypedNameConfirmation } from "@/components/ui/typed-name-confirmation";
import { GrantForm } from "./grant-form";
import { GrantStateBadge } from "./grant-state-badge";
import { granteeText, ruleText } from "./grant-text";
import { RevokeButton } from "./owner-grants";
import styles from "./sharing.module.css";

export const usagePageSize = 50;

const when = (iso: string | null) =>
  iso ? (
    <time dateTime={iso} title={iso} suppressHydrationWarning>
      {new Date(iso).toLocaleString()}
    </time>
  ) : (
    "—"
  );

/** One grant: what it allows, its state and conditions, and (for admins) who used it and its history. */
export function GrantDetail({ tenant, name }: { tenant: string; name: string }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const { data } = useSuspenseQuery(trpc.sharing.get.queryOptions({ tenant, name }));
  const { grant, canChange } = data;
  const [editing, setEditing] = useState(false);
  const [deleting, setDeleting] = useState(false);
  const router = useRouter();
  const refresh = () => queryClient.invalidateQueries({ queryKey: trpc.sharing.pathKey() });
  const revoke = useMutation(
    trpc.sharing.revoke.mutationOptions({
      onSuccess: () => {
        toast(`Grant "${grant.shortName}" revoked.`);
        void refresh();
      },
    }),
  );

  const remove = useMutation(
    trpc.sharing.delete.mutationOptions({
      onSuccess: () => {
        toast(`Grant "${grant.shortName}" deleted.`);
        void refresh();
        router.push(`/t/${tenant}/sharing`);
      },
    }),
  );

  return (
    <>
      <section className="card" aria-label="Grant" data-testid={`grant-detail-${grant.shortName}`}>
        <p>
          <GrantStateBadge state={grant.state} message={grant.message} showMessage />
        </p>
        <dl className={styles.details}>
          <dt>Purpose</dt>
          <dd>{grant.purpose}</dd>
          <dt>Shared with</dt>
          <dd>
            <ul className={styles.plain}>
              {grant.grantees.map((grantee) => (
                <li key={grantee.tenant}>{granteeText(grantee)}</li>
              ))}
            </ul>
          </dd>
          <dt>What</dt>
          <dd>
            <ul className={styles.plain}>
              {grant.rules.map((rule, index) => (
                // biome-ignore lint/suspicious/noArrayIndexKey: rules are ordered and have no other identity
                <li key={index}>{ruleText(rule)}</li>
              ))}
            </ul>
          </dd>
          <dt>Expires</dt>
          <dd>{grant.expiresAt ? when(grant.expiresAt) : "never (until revoked)"}</dd>
          <dt>Requested by</dt>
          <dd>{grant.requestedBy ?? "—"}</dd>
          <dt>Approved</dt>
          <dd>
            {grant.approvedBy ? (
              <>
                by {grant.approvedBy}, {when(grant.approvedAt)}
              </>
            ) : (
              "—"
            )}
          </dd>
          {grant.revokedAt ? (
            <>
              <dt>Revoked</dt>
              <dd>
                by {grant.revokedBy ?? "someone"}, {when(grant.revokedAt)}
              </dd>
            </>
          ) : null}
          <dt>Last used</dt>
          <dd>{grant.lastUsedAt ? <Age iso={grant.lastUsedAt} /> : "never"}</dd>
          <dt>Created</dt>
          <dd>{when(grant.createdAt)}</dd>
          <dt>Object</dt>
          <dd>
            <code>sharingpolicy/{grant.name}</code>
          </dd>
        </dl>
        {canChange ? (
          <p className="toolbar">
            {grant.state === "Revoked" ? null : (
              <>
                <button
                  type="button"
                  className="button"
                  onClick={() => setEditing(!editing)}
                  data-testid={`grant-edit-${grant.shortName}`}
                >
                  {editing ? "Cancel edit" : "Edit"}
                </button>
                <RevokeButton
                  grant={grant}
                  pending={revoke.isPending}
                  onRevoke={() => revoke.mutate({ tenant, name: grant.shortName })}
                />
              </>
            )}
            <button
              type="button"
              className="button"
              onClick={() => setDeleting(true)}
              data-testid={`grant-delete-${grant.shortName}`}
            >
              Delete
            </button>
          </p>
        ) : null}
      </section>

      {deleting ? (
        <TypedNameConfirmation
          name={grant.shortName}
          title={`Delete grant ${grant.shortName}`}
          confirmLabel="Type the grant's name to confirm"
          pending={remove.isPending}
          error={remove.error?.message ?? null}
          onConfirm={() => remove.mutate({ tenant, name: grant.shortName })}
          onCancel={() => setDeleting(false)}
          style={{ marginTop: "1rem" }}
        >
          <p>
            Grantees lose access at once and the grant is gone from this list; its uses stay in the audit log.
            To end access but keep the grant on record, revoke it instead.
          </p>
        </TypedNameConfirmation>
      ) : null}

      {editing ? (
        <GrantForm
          key={grant.resourceVersion ?? grant.name}
          tenant={tenant}
          initial={grant}
          onDone={() => {
            setEditing(false);
            void refresh();
          }}
          onCancel={() => setEditing(false)}
        />
      ) : null}

      <section className={styles.section} aria-labelledby="grant-conditions">
        <h2 id="grant-conditions">Status</h2>
        {grant.conditions.length === 0 ? (
          <p className={styles.muted}>Ring0 has not reported on this grant yet.</p>
        ) : (
          <ConditionsTable conditions={grant.conditions} timeHeader="Since" statusTone={conditionTone} />
        )}
      </section>

      {canChange ? <GrantUsage tenant={tenant} name={grant.name} /> : null}
    </>
  );
}

/** Who used the grant, when, for what and how (from the audit log), and its own history. */
function GrantUsage({ tenant, name }: { tenant: string; name: string }) {
  const trpc = useTRPC();
  const usage = useInfiniteQuery(
    trpc.sharing.usage.infiniteQueryOptions(
      { tenant, name, limit: usagePageSize },
      { getNextPageParam: (page) => page.nextCursor ?? undefined },
    ),
  );
  if (usage.isPending) return <p role="status">Loading usage…</p>;
  if (usage.isError) {
    return (
      <p className="alert alert-error" role="alert">
        {usage.error.message}
      </p>
    );
  }
  const uses = usage.data.pages.flatMap((page) => page.uses);
  const changes = usage.data.pages[0]?.changes ?? [];
  return (
    <>
      <section className={styles.section} aria-labelledby="grant-usage">
        <h2 id="grant-usage">Usage</h2>
        {uses.length === 0 ? (
          <EmptyState title="Not used yet">
            <p>Every request a grantee makes under this grant is recorded here.</p>
          </EmptyState>
        ) : (
          <table className="data" aria-label="Usage" data-testid="grant-usage">
            <thead>
              <tr>
                <th scope="col">When</th>
                <th scope="col">Who</th>
                <th scope="col">What</th>
                <th scope="col">Via</th>
                <th scope="col">Times</th>
              </tr>
            </thead>
            <tbody>
              {uses.map((use) => (
                <tr key={use.id}>
                  <td>{when(new Date(use.at).toISOString())}</td>
                  <td>
                    {use.who}
                    {use.whoTenant ? <span className={styles.muted}> ({use.whoTenant})</span> : null}
                  </td>
                  <td>
                    {[use.verb, use.resource, use.name ? `"${use.name}"` : null].filter(Boolean).join(" ")}
                    {use.namespace ? ` in ${use.namespace}` : ""}
                  </td>
                  <td>{use.via ?? "—"}</td>
                  <td>{use.count}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
        {usage.hasNextPage ? (
          <p className="toolbar">
            <button
              type="button"
              className="button"
              disabled={usage.isFetchingNextPage}
              onClick={() => void usage.fetchNextPage()}
            >
              {usage.isFetchingNextPage ? "Loading…" : "Older uses"}
            </button>
          </p>
        ) : null}
      </section>
      <section className={styles.section} aria-labelledby="grant-history">
        <h2 id="grant-history">History</h2>
        {changes.length === 0 ? (
          <p className={styles.muted}>No changes recorded.</p>
        ) : (
          <table className="data" aria-label="History" data-testid="grant-history">
            <thead>
              <tr>
                <th scope="col">When</th>
                <th scope="col">Who</th>
                <th scope="col">Change</th>
              </tr>
            </thead>
            <tbody>
              {changes.map((change) => (
                <tr key={change.id}>
                  <td>{when(new Date(change.at).toISOString())}</td>
                  <td>{change.actorName}</td>
                  <td>{change.action.replace(/^share\./, "")}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>
    </>
  );
}
