"use client";

import { useMutation, useQueryClient, useSuspenseQuery } from "@tanstack/react-query";
import { type FormEvent, useState } from "react";
import styles from "@/components/quotas/quotas.module.css";
import { useTRPC } from "@/components/trpc/client";
import { EmptyState } from "@/components/ui/empty-state";
import { toast } from "@/components/ui/toast";
import { QUOTA_RESOURCES } from "@/server/core/quota-resources";
import { LimitFields } from "./limit-fields";

type Fields = Record<string, string>;

const emptyFields = (): Fields => Object.fromEntries(QUOTA_RESOURCES.map((resource) => [resource.name, ""]));

function hardFrom(fields: Fields): Record<string, string> {
  return Object.fromEntries(
    Object.entries(fields)
      .map(([resource, value]) => [resource, value.trim()] as const)
      .filter(([, value]) => value !== ""),
  );
}

/** Named limits operators copy into tenants' quotas; one may be the default for new tenants. */
export function QuotaTemplates() {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const { data: templates } = useSuspenseQuery(trpc.quotas.templates.list.queryOptions());
  const [editing, setEditing] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const refresh = () => queryClient.invalidateQueries({ queryKey: trpc.quotas.templates.list.queryKey() });
  const onError = (failure: { message: string }) => setError(failure.message);

  const remove = useMutation(
    trpc.quotas.templates.delete.mutationOptions({
      onSuccess: ({ name }) => {
        toast(`Template "${name}" deleted.`);
        setError(null);
        void refresh();
      },
      onError,
    }),
  );
  const setDefault = useMutation(
    trpc.quotas.templates.setDefault.mutationOptions({
      onSuccess: ({ name }) => {
        toast(name ? `New tenants now start with "${name}".` : "No template is the default now.");
        setError(null);
        void refresh();
      },
      onError,
    }),
  );

  return (
    <section className={styles.section} aria-labelledby="templates-heading">
      <h2 id="templates-heading">Templates</h2>
      {error ? (
        <p className="alert alert-error" role="alert">
          {error}
        </p>
      ) : null}
      {templates.length === 0 ? (
        <EmptyState title="No templates">
          <p>Create one (e.g. small, medium, large) to set tenants' quotas in one step.</p>
        </EmptyState>
      ) : (
        <table className="data" aria-label="Quota templates">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Limits</th>
              <th scope="col">Used by</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {templates.map((template) => (
              <tr key={template.name}>
                <th scope="row">
                  {template.name} {template.isDefault ? <span className="badge">default</span> : null}
                  {template.description ? <div className={styles.muted}>{template.description}</div> : null}
                </th>
                <td>
                  {editing === template.name ? (
                    <TemplateForm
                      mode="edit"
                      initial={{
                        name: template.name,
                        description: template.description,
                        hard: template.hard,
                      }}
                      onDone={() => {
                        setEditing(null);
                        void refresh();
                      }}
                    />
                  ) : (
                    <code>
                      {Object.entries(template.hard)
                        .map(([resource, value]) => `${resource}=${value}`)
                        .join(", ")}
                    </code>
                  )}
                </td>
                <td>
                  {template.tenants.length > 0 ? (
                    template.tenants.join(", ")
                  ) : (
                    <span className={styles.muted}>—</span>
                  )}
                </td>
                <td>
                  <span className="toolbar" style={{ marginBottom: 0 }}>
                    <button
                      type="button"
                      className="button"
                      onClick={() => setEditing(editing === template.name ? null : template.name)}
                    >
                      {editing === template.name ? "Cancel" : "Edit"}
                    </button>
                    <button
                      type="button"
                      className="button"
                      disabled={setDefault.isPending}
                      onClick={() => setDefault.mutate({ name: template.isDefault ? null : template.name })}
                    >
                      {template.isDefault ? "Unset default" : "Make default"}
                    </button>
                    <button
                      type="button"
                      className="button"
                      disabled={remove.isPending}
                      aria-label={`Delete template ${template.name}`}
                      onClick={() => remove.mutate({ name: template.name })}
                    >
                      Delete
                    </button>
                  </span>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <details className={styles.section}>
        <summary>New template</summary>
        <TemplateForm
          mode="create"
          initial={{ name: "", description: "", hard: {} }}
          onDone={() => void refresh()}
        />
      </details>
    </section>
  );
}

function TemplateForm({
  mode,
  initial,
  onDone,
}: {
  mode: "create" | "edit";
  initial: { name: string; description: string; hard: Record<string, string> };
  onDone: () => void;
}) {
  const trpc = useTRPC();
  const [name, setName] = useState(initial.name);
  const [description, setDescription] = useState(initial.description);
  const [isDefault, setIsDefault] = useState(false);
  const [fields, setFields] = useState<Fields>({ ...emptyFields(), ...initial.hard });
  const create = useMutation(
    trpc.quotas.templates.create.mutationOptions({
      onSuccess: (created) => {
        toast(`Template "${created.name}" created.`);
        setName("");
        setDescription("");
        setFields(emptyFields());
        onDone();
      },
    }),
  );
  const update = useMutation(
    trpc.quotas.templates.update.mutationOptions({
      onSuccess: (updated) => {
        toast(`Template "${updated.name}" saved.`);
        onDone();
      },
    }),
  );
  const pending = create.isPending || update.isPending;
  const failure = create.error ?? update.error;
  const submit = (event: FormEvent) => {
    event.preventDefault();
    const hard = hardFrom(fields);
    if (mode === "create") create.mutate({ name, description, hard, isDefault });
    else update.mutate({ name, description, hard });
  };
  return (
    <form
      onSubmit={submit}
      aria-label={mode === "create" ? "New quota template" : `Edit template ${initial.name}`}
    >
      <div className={styles.formGrid}>
        {mode === "create" ? (
          <label className="field">
            Name
            <input value={name} required onChange={(event) => setName(event.target.value)} />
          </label>
        ) : null}
        <label className="field">
          Description
          <input value={description} onChange={(event) => setDescription(event.target.value)} />
        </label>
        <LimitFields resources={QUOTA_RESOURCES} values={fields} onChange={setFields} />
      </div>
      {mode === "create" ? (
        <label>
          <input
            type="checkbox"
            checked={isDefault}
            onChange={(event) => setIsDefault(event.target.checked)}
          />{" "}
          Default for new tenants
        </label>
      ) : null}
      <p className="toolbar">
        <button type="submit" className="button button-primary" disabled={pending}>
          {mode === "create" ? "Create template" : "Save"}
        </button>
      </p>
      {failure ? (
        <p className="alert alert-error" role="alert">
          {failure.message}
        </p>
      ) : null}
    </form>
  );
}
