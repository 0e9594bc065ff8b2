"use client";

import { useMutation } from "@tanstack/react-query";
import Link from "next/link";
import { type FormEvent, useState } from "react";
import { Age } from "@/components/nodes/age";
import { emptyFirstAdmin, FirstAdminFields, firstAdminInput } from "@/components/tenant/first-admin-fields";
import { OneTimePassword } from "@/components/tenant/one-time-password";
import { PhaseBadge, timeToReady } from "@/components/tenants/phase";
import { useTRPC } from "@/components/trpc/client";
import { useLiveQuery } from "@/components/trpc/live-query";
import { EmptyState } from "@/components/ui/empty-state";
import { LiveBadge } from "@/components/ui/live-badge";
import { toast } from "@/components/ui/toast";
import { TypedNameConfirmation } from "@/components/ui/typed-name-confirmation";
import { createTenantSchema, provisioners, supportedVersions } from "@/server/core/new-tenant";

/** "name: expected …; version: …" — the same wording the API uses for its validation errors. */
function describeIssues(issues: { path: PropertyKey[]; message: string }[]): string {
  return issues
    .map((issue) => `${issue.path.length ? issue.path.map(String).join(".") : "input"}: ${issue.message}`)
    .join("; ");
}

/** The Tenant custom resources in the super cluster, kept current by the tenants.watchResources SSE feed. */
export function TenantTable() {
  const trpc = useTRPC();
  const { data: tenants, feed } = useLiveQuery(trpc.tenants.resources.queryOptions(), (onData) =>
    trpc.tenants.watchResources.subscriptionOptions(undefined, { onData }),
  );
  const [deleting, setDeleting] = useState<string | null>(null);

  return (
    <section aria-label="Tenants">
      <p className="toolbar">
        <LiveBadge subject="Tenant list" status={feed.status} />
        <span className="whoami-meta">
          {tenants.length} tenant{tenants.length === 1 ? "" : "s"} ·{" "}
          {tenants.filter((tenant) => tenant.ready === "True").length} ready
        </span>
      </p>

      <CreateTenantForm />

      {tenants.length === 0 ? (
        <EmptyState title="No tenants">
          <p>No Tenant resources exist in the super cluster yet. Create the first one above.</p>
        </EmptyState>
      ) : (
        <table className="data" aria-label="Tenants">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Display name</th>
              <th scope="col">Phase</th>
              <th scope="col">Version</th>
              <th scope="col">Provisioner</th>
              <th scope="col">Age</th>
              <th scope="col">Time to ready</th>
              <th scope="col">
                <span className="sr-only">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {tenants.map((tenant) => (
              <tr key={tenant.name}>
                <td>
                  <Link href={`/operator/tenants/${encodeURIComponent(tenant.name)}`}>{tenant.name}</Link>
                </td>
                <td>{tenant.displayName}</td>
                <td>
                  <PhaseBadge phase={tenant.phase} message={tenant.readyMessage} />
                  {tenant.suspended && tenant.phase !== "Suspended" ? " (suspending)" : ""}
                </td>
                <td title={tenant.runningVersion ? `serving ${tenant.runningVersion}` : undefined}>
                  {tenant.version}
                </td>
                <td>{tenant.provisioner}</td>
                <td>
                  <Age iso={tenant.createdAt} />
                </td>
                <td>{timeToReady(tenant.createdAt, tenant.readyAt)}</td>
                <td>
                  <button
                    type="button"
                    className="button"
                    aria-label={`Delete ${tenant.name}`}
                    onClick={() => setDeleting(tenant.name)}
                  >
                    Delete
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}

      {deleting ? <DeleteTenantForm key={deleting} name={deleting} onDone={() => setDeleting(null)} /> : null}
    </section>
  );
}

function CreateTenantForm() {
  const trpc = useTRPC();
  const [name, setName] = useState("");
  const [displayName, setDisplayName] = useState("");
  const [version, setVersion] = useState<string>(supportedVersions[0]);
  const [provisioner, setProvisioner] = useState<string>("local");
  const [admins, setAdmins] = useState("");
  const [firstAdmin, setFirstAdmin] = useState(emptyFirstAdmin);
  const [issued, setIssued] = useState<{ username: string; password: string } | null>(null);
  const [invalid, setInvalid] = useState<string | null>(null);

  // The new row arrives through the live feed; nothing to refetch here.
  const create = useMutation(
    trpc.tenants.create.mutationOptions({
      onSuccess: (tenant) => {
        toast(`Tenant "${tenant.name}" created.`);
        setName("");
        setDisplayName("");
        setAdmins("");
        setFirstAdmin(emptyFirstAdmin);
        if (tenant.firstAdmin) {
          setIssued({ username: tenant.firstAdmin.username, password: tenant.firstAdmin.temporaryPassword });
        }
      },
    }),
  );

  const submit = (event: FormEvent) => {
    event.preventDefault();
    create.reset();
    // Same schema as the API, so a mistake is explained before anything is sent.
    const parsed = createTenantSchema.safeParse({
      name: name.trim(),
      displayName,
      version,
      provisioner,
      admins: admins
        .split(",")
        .map((admin) => admin.trim())
        .filter(Boolean),
      firstAdmin: firstAdminInput(firstAdmin),
    });
    if (!parsed.success) {
      setInvalid(`Invalid input — ${describeIssues(parsed.error.issues)}`);
      return;
    }
    setInvalid(null);
    create.mutate(parsed.data);
  };

  const error = invalid ?? create.error?.message ?? null;

  return (
    <form className="card" onSubmit={submit} aria-label="Create tenant" noValidate>
      <h2>Create tenant</h2>
      <div className="toolbar">
        <label className="field">
          Name
          <input value={name} onChange={(event) => setName(event.target.value)} autoComplete="off" />
        </label>
        <label className="field">
          Display name
          <input value={displayName} onChange={(event) => setDisplayName(event.target.value)} />
        </label>
        <label className="field">
          Version
          <select value={version} onChange={(event) => setVersion(event.target.value)}>
            {supportedVersions.map((candidate) => (
              <option key={candidate} value={candidate}>
                {candidate}
              </option>
            ))}
          </select>
        </label>
        <label className="field">
          Provisioner
          <select value={provisioner} onChange={(event) => setProvisioner(event.target.value)}>
            {provisioners.map((candidate) => (
              <option key={candidate} value={candidate}>
                {candidate}
              </option>
            ))}
          </select>
        </label>
        <label className="field">
          Admins (comma-separated)
          <input value={admins} onChange={(event) => setAdmins(event.target.value)} autoComplete="off" />
        </label>
        <button type="submit" className="button button-primary" disabled={create.isPending}>
          {create.isPending ? "Creating…" : "Create tenant"}
        </button>
      </div>
      <FirstAdminFields value={firstAdmin} onChange={setFirstAdmin} />
      {issued ? (
        <OneTimePassword
          username={issued.username}
          password={issued.password}
          onDone={() => setIssued(null)}
        />
      ) : null}
      {error ? (
        <p className="alert alert-error" role="alert">
          {error}
        </p>
      ) : null}
    </form>
  );
}

/**
 * Deleting a tenant takes its control plane and workloads with it, so the name must be typed.
 * `onDone` runs on cancel and after the delete; `onDeleted` only after it.
 */
export function DeleteTenantForm({
  name,
  onDone,
  onDeleted,
}: {
  name: string;
  onDone: () => void;
  onDeleted?: () => void;
}) {
  const trpc = useTRPC();
  const remove = useMutation(
    trpc.tenants.delete.mutationOptions({
      onSuccess: () => {
        toast(`Tenant "${name}" deleted.`);
        onDone();
        onDeleted?.();
      },
    }),
  );

  return (
    <TypedNameConfirmation
      name={name}
      title={`Delete tenant ${name}`}
      confirmLabel="Type the tenant's name to confirm"
      pending={remove.isPending}
      error={remove.error?.message}
      onConfirm={(confirm) => remove.mutate({ name, confirm })}
      onCancel={onDone}
    >
      <p>This deletes the tenant's control plane and everything its workloads run on the super cluster.</p>
    </TypedNameConfirmation>
  );
}
