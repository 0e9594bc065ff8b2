"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { type FormEvent, useState } from "react";
import styles from "@/components/quotas/quotas.module.css";
import { useTRPC } from "@/components/trpc/client";
import { toast } from "@/components/ui/toast";
import { QUOTA_RESOURCES } from "@/server/core/quota-resources";
import { LimitFields } from "./limit-fields";

type Fields = Record<string, string>;

/** Form fields from limits: every resource, empty when unlimited. */
function fieldsFrom(hard: Record<string, string>): Fields {
  return Object.fromEntries(QUOTA_RESOURCES.map((resource) => [resource.name, hard[resource.name] ?? ""]));
}

/** The limits the form gives: non-empty fields, trimmed. */
function hardFrom(fields: Fields): Record<string, string> {
  return Object.fromEntries(
    Object.entries(fields)
      .map(([resource, value]) => [resource, value.trim()] as const)
      .filter(([, value]) => value !== ""),
  );
}

/** The entries that differ from the template's (sent as explicit limits over it). */
function overrides(hard: Record<string, string>, template: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(hard).filter(([resource, value]) => template[resource] !== value));
}

/**
 * A tenant's quota on its operator page: the limits and usage now, and a form that sets limits
 * (directly or from a template) with a preview of what would then be over before anything changes.
 */
export function QuotaCard({ tenant }: { tenant: string }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const current = useQuery(trpc.quotas.get.queryOptions({ tenant }, { refetchInterval: 15_000 }));
  const templates = useQuery(trpc.quotas.templates.list.queryOptions());
  const [fields, setFields] = useState<Fields | null>(null);
  const [template, setTemplate] = useState<string>("");
  const [allowBelowUsage, setAllowBelowUsage] = useState(false);
  const [preview, setPreview] = useState<Awaited<ReturnType<typeof fetchPreview>> | null>(null);
  const [previewError, setPreviewError] = useState<string | null>(null);
  const [previewing, setPreviewing] = useState(false);
  const [warnings, setWarnings] = useState<string[]>([]);

  const shown = fields ?? fieldsFrom(current.data?.hard ?? {});
  const templateHard = templates.data?.find((entry) => entry.name === template)?.hard ?? {};
  const hard = hardFrom(shown);

  const refresh = () =>
    Promise.all([
      queryClient.invalidateQueries({ queryKey: trpc.quotas.get.queryKey({ tenant }) }),
      queryClient.invalidateQueries({ queryKey: trpc.quotas.usage.tenant.pathKey() }),
    ]);

  function fetchPreview() {
    return queryClient.fetchQuery({ ...trpc.quotas.preview.queryOptions({ tenant, hard }), staleTime: 0 });
  }

  const set = useMutation(
    trpc.quotas.set.mutationOptions({
      onSuccess: (result) => {
        toast(`Quota of "${tenant}" set.`);
        setWarnings(result.warnings);
        setFields(null);
        setPreview(null);
        setAllowBelowUsage(false);
        void refresh();
      },
    }),
  );
  const clear = useMutation(
    trpc.quotas.clear.mutationOptions({
      onSuccess: () => {
        toast(`Quota of "${tenant}" cleared: nothing limits it now.`);
        setFields(null);
        setTemplate("");
        setPreview(null);
        setWarnings([]);
        void refresh();
      },
    }),
  );

  const edit = (next: Fields) => {
    setFields(next);
    setPreview(null);
    setPreviewError(null);
  };

  const runPreview = async () => {
    setPreviewing(true);
    setPreviewError(null);
    try {
      setPreview(await fetchPreview());
    } catch (error) {
      setPreview(null);
      setPreviewError(error instanceof Error ? error.message : String(error));
    } finally {
      setPreviewing(false);
    }
  };

  const apply = (event: FormEvent) => {
    event.preventDefault();
    set.mutate({
      tenant,
      ...(template ? { template, hard: overrides(hard, templateHard) } : { hard }),
      allowBelowUsage,
    });
  };

  const data = current.data;
  return (
    <section className="card" aria-labelledby="quota-heading" style={{ marginTop: "1.5rem" }}>
      <h2 id="quota-heading">Quota</h2>
      {current.error ? (
        <p className="alert alert-error" role="alert">
          {current.error.message}
        </p>
      ) : !data ? (
        <p role="status">Loading quota…</p>
      ) : Object.keys(data.hard).length === 0 ? (
        <p>
          No tenant quota: {tenant} is bounded only by its namespaces' ResourceQuotas and the super cluster's
          capacity.
        </p>
      ) : (
        <table className="data" aria-label="Current quota">
          <thead>
            <tr>
              <th scope="col">Resource</th>
              <th scope="col">Used</th>
              <th scope="col">Limit</th>
            </tr>
          </thead>
          <tbody>
            {Object.entries(data.hard).map(([resource, limit]) => {
              const over = data.over.some((entry) => entry.resource === resource);
              return (
                <tr key={resource}>
                  <th scope="row">
                    <code>{resource}</code>
                  </th>
                  <td className={`${styles.numbers} ${over ? styles.over : ""}`}>
                    {data.used ? (data.used[resource] ?? "0") : "unknown"}
                  </td>
                  <td className={styles.numbers}>{limit}</td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
      {data?.template ? <p className={styles.muted}>Copied from template {data.template}.</p> : null}

      <form onSubmit={apply} aria-label={`Set the quota of ${tenant}`}>
        <h3>Set limits</h3>
        <label className="field">
          Template
          <select
            value={template}
            onChange={(event) => {
              const name = event.target.value;
              setTemplate(name);
              const chosen = templates.data?.find((entry) => entry.name === name);
              edit(chosen ? fieldsFrom(chosen.hard) : shown);
            }}
          >
            <option value="">No template (explicit limits)</option>
            {(templates.data ?? []).map((entry) => (
              <option key={entry.name} value={entry.name}>
                {entry.name}
                {entry.isDefault ? " (default)" : ""}
              </option>
            ))}
          </select>
        </label>
        <div className={styles.formGrid}>
          <LimitFields resources={QUOTA_RESOURCES} values={shown} onChange={edit} />
        </div>
        <label>
          <input
            type="checkbox"
            checked={allowBelowUsage}
            onChange={(event) => setAllowBelowUsage(event.target.checked)}
          />{" "}
          Allow limits below current usage
        </label>
        {allowBelowUsage ? (
          <p className={`alert ${styles.warning}`} role="note">
            Nothing running is stopped, but the tenant can create nothing more of a resource it is over until
            its usage drops below the new limit.
          </p>
        ) : null}
        <p className="toolbar">
          <button
            type="button"
            className="button"
            onClick={() => void runPreview()}
            disabled={previewing || Object.keys(hard).length === 0}
          >
            {previewing ? "Previewing…" : "Preview"}
          </button>
          <button type="submit" className="button button-primary" disabled={set.isPending}>
            {set.isPending ? "Applying…" : "Apply"}
          </button>
          <button
            type="button"
            className="button"
            disabled={clear.isPending || !data || Object.keys(data.hard).length === 0}
            onClick={() => clear.mutate({ tenant })}
          >
            Clear quota
          </button>
        </p>
        {previewError ? (
          <p className="alert alert-error" role="alert">
            {previewError}
          </p>
        ) : null}
        {set.error ? (
          <p className="alert alert-error" role="alert">
            {set.error.message}
          </p>
        ) : null}
        {clear.error ? (
          <p className="alert alert-error" role="alert">
            {clear.error.message}
          </p>
        ) : null}
        {warnings.length > 0 ? (
          <ul className={`alert ${styles.warning}`} aria-label="Warnings">
            {warnings.map((warning) => (
              <li key={warning}>{warning}</li>
            ))}
          </ul>
        ) : null}
      </form>
      {preview ? <QuotaPreviewResult preview={preview} /> : null}
    </section>
  );
}

type Preview = {
  usageAt: Date | null;
  over: Array<{
    resource: string;
    used: string;
    limit: string;
    namespaces: Array<{ namespace: string; used: string }>;
    workloads: Array<{ namespace: string; kind: string; name: string; pods: number; used: string }>;
  }>;
  shares: Array<{
    resource: string;
    limit: string;
    total: string;
    namespaces: Array<{ namespace: string; share: string }>;
  }>;
  namespacesOver: Array<{ namespace: string; resource: string; used: string; limit: string }>;
};

function QuotaPreviewResult({ preview }: { preview: Preview }) {
  const clean =
    preview.over.length === 0 && preview.shares.length === 0 && preview.namespacesOver.length === 0;
  return (
    <section aria-label="Quota preview" className={styles.section}>
      <h3>Preview</h3>
      {preview.usageAt === null ? (
        <p className="alert alert-info">
          The tenant's usage could not be read, so nothing can be said about it.
        </p>
      ) : clean ? (
        <p className="alert alert-info" role="status">
          Nothing would be over: current usage fits these limits.
        </p>
      ) : null}
      {preview.over.length > 0 ? (
        <ul aria-label="Resources that would be over">
          {preview.over.map((entry) => (
            <li key={entry.resource}>
              <strong>
                <code>{entry.resource}</code> would be over: used {entry.used}, limit {entry.limit}
              </strong>
              {entry.namespaces.length > 0 ? (
                <div className={styles.muted}>
                  Namespaces: {entry.namespaces.map((item) => `${item.namespace} ${item.used}`).join(", ")}
                </div>
              ) : null}
              {entry.workloads.length > 0 ? (
                <div className={styles.muted}>
                  Workloads:{" "}
                  {entry.workloads
                    .map(
                      (item) =>
                        `${item.namespace}/${item.kind}/${item.name} (${item.pods} pods) ${item.used}`,
                    )
                    .join(", ")}
                </div>
              ) : null}
            </li>
          ))}
        </ul>
      ) : null}
      {preview.shares.length > 0 ? (
        <ul aria-label="Namespace quotas that would not fit">
          {preview.shares.map((entry) => (
            <li key={entry.resource}>
              <code>{entry.resource}</code>: the namespaces' quotas add up to {entry.total} (
              {entry.namespaces.map((item) => `${item.namespace} ${item.share}`).join(", ")}), more than{" "}
              {entry.limit}
            </li>
          ))}
        </ul>
      ) : null}
      {preview.namespacesOver.length > 0 ? (
        <ul aria-label="Namespaces over on their own">
          {preview.namespacesOver.map((entry) => (
            <li key={`${entry.namespace}/${entry.resource}`}>
              Namespace {entry.namespace} alone uses {entry.used} of <code>{entry.resource}</code> (limit{" "}
              {entry.limit})
            </li>
          ))}
        </ul>
      ) : null}
    </section>
  );
}
