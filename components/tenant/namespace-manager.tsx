"use client";

import { useMutation, useQueryClient, useSuspenseQuery } from "@tanstack/react-query";
import { type FormEvent, useState } from "react";
import { Age } from "@/components/nodes/age";
import { useTRPC } from "@/components/trpc/client";
import { EmptyState } from "@/components/ui/empty-state";
import { toast } from "@/components/ui/toast";
import { TypedNameConfirmation } from "@/components/ui/typed-name-confirmation";
import { namespaceName } from "@/server/core/namespace-name";

/**
 * The tenant's namespaces, listed, created and deleted as the signed-in user. Refetched after
 * every change, quickly while something terminates or the control plane is not serving yet.
 */
export function NamespaceManager({ tenant }: { tenant: string }) {
  const trpc = useTRPC();
  const { data } = useSuspenseQuery({
    ...trpc.controlPlane.namespaces.list.queryOptions({ tenant }),
    refetchInterval: (query) => {
      const list = query.state.data;
      if (list?.state !== "serving") return 5_000;
      return list.namespaces.some((namespace) => namespace.phase === "Terminating") ? 2_000 : 15_000;
    },
  });
  const [deleting, setDeleting] = useState<string | null>(null);

  if (data.state === "not-serving") {
    return (
      <EmptyState
        title={
          data.phase === "Absent"
            ? "No control plane yet — ask an operator"
            : `The control plane is ${data.phase}`
        }
      >
        <p>{data.message}</p>
        <p>This page updates by itself once the control plane serves.</p>
      </EmptyState>
    );
  }

  return (
    <section aria-label="Namespaces">
      <CreateNamespaceForm tenant={tenant} />
      {deleting ? (
        <DeleteNamespaceForm
          key={deleting}
          tenant={tenant}
          name={deleting}
          onDone={() => setDeleting(null)}
        />
      ) : null}
      {data.namespaces.length === 0 ? (
        <EmptyState title="No namespaces">
          <p>This control plane has no namespaces you can see.</p>
        </EmptyState>
      ) : (
        <table className="data" aria-label="Namespaces">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Status</th>
              <th scope="col">Age</th>
              <th scope="col">
                <span className="sr-only">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {data.namespaces.map((namespace) => (
              <tr key={namespace.name}>
                <td>{namespace.name}</td>
                <td>
                  <span className={`badge ${namespace.phase === "Active" ? "badge-success" : ""}`}>
                    {namespace.phase}
                  </span>
                </td>
                <td>
                  <Age iso={namespace.createdAt} />
                </td>
                <td>
                  <button
                    type="button"
                    className="button"
                    aria-label={`Delete ${namespace.name}`}
                    disabled={namespace.phase === "Terminating"}
                    onClick={() => setDeleting(namespace.name)}
                  >
                    Delete
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

function useRefreshNamespaces(tenant: string) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  return () =>
    queryClient.invalidateQueries({ queryKey: trpc.controlPlane.namespaces.list.queryKey({ tenant }) });
}

function CreateNamespaceForm({ tenant }: { tenant: string }) {
  const trpc = useTRPC();
  const refresh = useRefreshNamespaces(tenant);
  const [name, setName] = useState("");
  const [invalid, setInvalid] = useState<string | null>(null);
  const create = useMutation(
    trpc.controlPlane.namespaces.create.mutationOptions({
      onSuccess: (namespace) => {
        toast(`Namespace "${namespace.name}" created.`);
        setName("");
        void refresh();
      },
    }),
  );

  const submit = (event: FormEvent) => {
    event.preventDefault();
    create.reset();
    // The API's own rule and words, so a bad name is explained before anything is sent.
    const parsed = namespaceName.safeParse(name);
    if (!parsed.success) {
      setInvalid(`Invalid input — name: ${parsed.error.issues.map((issue) => issue.message).join("; ")}`);
      return;
    }
    setInvalid(null);
    create.mutate({ tenant, name: parsed.data });
  };
  const error = invalid ?? create.error?.message ?? null;

  return (
    <form
      className="card"
      onSubmit={submit}
      aria-label="Create namespace"
      noValidate
      style={{ marginBottom: "1rem" }}
    >
      <div className="toolbar" style={{ marginBottom: 0 }}>
        <label className="field">
          Namespace name
          <input value={name} onChange={(event) => setName(event.target.value)} autoComplete="off" />
        </label>
        <button type="submit" className="button button-primary" disabled={create.isPending}>
          {create.isPending ? "Creating…" : "Create namespace"}
        </button>
      </div>
      {error ? (
        <p className="alert alert-error" role="alert">
          {error}
        </p>
      ) : null}
    </form>
  );
}

/** Deleting a namespace deletes everything in it, so its name must be typed. */
function DeleteNamespaceForm({ tenant, name, onDone }: { tenant: string; name: string; onDone: () => void }) {
  const trpc = useTRPC();
  const refresh = useRefreshNamespaces(tenant);
  const remove = useMutation(
    trpc.controlPlane.namespaces.delete.mutationOptions({
      onSuccess: () => {
        toast(`Namespace "${name}" is being deleted.`);
        void refresh();
        onDone();
      },
    }),
  );

  return (
    <TypedNameConfirmation
      name={name}
      title={`Delete namespace ${name}`}
      confirmLabel="Type the namespace's name to confirm"
      pending={remove.isPending}
      error={remove.error?.message}
      onConfirm={(confirm) => remove.mutate({ tenant, name, confirm })}
      onCancel={onDone}
      style={{ marginBottom: "1rem" }}
    >
      <p>This deletes everything in the namespace: workloads, services, secrets and their data.</p>
    </TypedNameConfirmation>
  );
}
