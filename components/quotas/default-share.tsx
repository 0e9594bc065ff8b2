"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { type FormEvent, useState } from "react";
import styles from "@/components/quotas/quotas.module.css";
import { useTRPC } from "@/components/trpc/client";
import { toast } from "@/components/ui/toast";
import { QUOTA_RESOURCES } from "@/server/core/quota-resources";
import { isTenantAdmin } from "@/server/core/roles";
import { LimitFields } from "./limit-fields";

/** What a namespace's ResourceQuota can give: every tenant quota resource but `namespaces`. */
const SHARE_RESOURCES = QUOTA_RESOURCES.filter((resource) => resource.name !== "namespaces");

type Fields = Record<string, string>;

const hardFrom = (fields: Fields): Record<string, string> =>
  Object.fromEntries(
    Object.entries(fields)
      .map(([resource, value]) => [resource, value.trim()] as const)
      .filter(([, value]) => value !== ""),
  );

/**
 * The tenant's default namespace share: the quota each new namespace without a ResourceQuota gets
 * (as its `default-share` ResourceQuota). Its admins (and operators) edit or clear it; members see it.
 */
export function DefaultShare({ tenant }: { tenant: string }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const share = useQuery(trpc.quotas.defaults.get.queryOptions({ tenant }));
  const me = useQuery(trpc.me.get.queryOptions());
  const canEdit = me.data ? isTenantAdmin(me.data, tenant) : false;
  const [editing, setEditing] = useState(false);
  const [fields, setFields] = useState<Fields>({});
  const refresh = () =>
    queryClient.invalidateQueries({ queryKey: trpc.quotas.defaults.get.queryKey({ tenant }) });
  const set = useMutation(
    trpc.quotas.defaults.set.mutationOptions({
      onSuccess: (view) => {
        toast(view.hard ? "Default share saved." : "Default share cleared.");
        setEditing(false);
        void refresh();
      },
    }),
  );
  const hard = share.data?.hard ?? null;
  const startEditing = () => {
    set.reset();
    setFields({ ...(hard ?? {}) });
    setEditing(true);
  };
  const submit = (event: FormEvent) => {
    event.preventDefault();
    set.mutate({ tenant, hard: hardFrom(fields) });
  };

  return (
    <section className={styles.section} aria-labelledby="default-share-heading" id="default-share">
      <h2 id="default-share-heading">Default share for new namespaces</h2>
      <p className={styles.muted}>
        A new namespace without a ResourceQuota gets a <code>default-share</code> ResourceQuota with these
        limits, which you may change or delete afterwards. Without one, a new namespace is bounded by the
        tenant quota alone. A namespace is refused when its default share does not fit in what the other
        namespaces&apos; quotas leave.
      </p>
      {share.isPending ? (
        <p role="status">Loading the default share…</p>
      ) : share.error ? (
        <p className="alert alert-error" role="alert">
          {share.error.message}
        </p>
      ) : hard ? (
        <table className="data" aria-label="Default share">
          <thead>
            <tr>
              <th>Resource</th>
              <th>Each new namespace gets</th>
            </tr>
          </thead>
          <tbody>
            {Object.entries(hard).map(([resource, limit]) => (
              <tr key={resource}>
                <td>{resource}</td>
                <td>{limit}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : (
        <p>No default share is set.</p>
      )}
      {share.data?.updatedBy ? (
        <p className={styles.muted}>
          Set by {share.data.updatedBy}
          {share.data.updatedAt ? ` on ${new Date(share.data.updatedAt).toUTCString()}` : ""}.
        </p>
      ) : null}
      {canEdit && !editing ? (
        <p className="toolbar">
          <button type="button" className="button" onClick={startEditing} disabled={share.isPending}>
            {hard ? "Edit" : "Set a default share"}
          </button>
          {hard ? (
            <button
              type="button"
              className="button"
              disabled={set.isPending}
              onClick={() => set.mutate({ tenant, hard: null })}
            >
              Clear
            </button>
          ) : null}
        </p>
      ) : null}
      {canEdit && editing ? (
        <form onSubmit={submit} aria-label="Edit the default share">
          <div className={styles.formGrid}>
            <LimitFields resources={SHARE_RESOURCES} values={fields} onChange={setFields} />
          </div>
          <p className="toolbar">
            <button type="submit" className="button button-primary" disabled={set.isPending}>
              Save
            </button>
            <button type="button" className="button" onClick={() => setEditing(false)}>
              Cancel
            </button>
          </p>
        </form>
      ) : null}
      {set.error ? (
        <p className="alert alert-error" role="alert">
          {set.error.message}
        </p>
      ) : null}
    </section>
  );
}
