"use client";

import { useMutation, useQueryClient, useSuspenseQuery } from "@tanstack/react-query";
import { useRouter } from "next/navigation";
import { type FormEvent, useState } from "react";
import styles from "@/components/tenants/tenant-page.module.css";
import { DeleteTenantForm } from "@/components/tenants/tenant-table";
import { useTRPC } from "@/components/trpc/client";
import { toast } from "@/components/ui/toast";
import type { TenantDetail } from "@/server/tenants/tenant-detail";

/** Whether `candidate` (an exact version) is what the tenant runs or asks for already. */
function isCurrentVersion(candidate: string, tenant: TenantDetail): boolean {
  const running = tenant.runningVersion?.replace(/^v/, "");
  if (running) return candidate === running;
  // A minor in the spec ("1.36") means its newest patch, as the controller resolves it.
  return candidate === tenant.version || candidate.startsWith(`${tenant.version}.`);
}

/** Suspend/resume, upgrade, delete and the break-glass kubeconfig of one tenant. */
export function TenantActions({ tenant }: { tenant: TenantDetail }) {
  return (
    <section className="card" aria-labelledby="actions-heading">
      <h2 id="actions-heading">Actions</h2>
      <SuspendControl tenant={tenant} />
      <UpgradeForm tenant={tenant} />
      <DeleteControl name={tenant.name} />
      <BreakGlassForm tenant={tenant} />
    </section>
  );
}

function useRefreshTenant(name: string) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  // The live feed brings the change too; this makes the page agree even if the feed is paused.
  return () => queryClient.invalidateQueries({ queryKey: trpc.tenants.get.queryKey({ name }) });
}

function SuspendControl({ tenant }: { tenant: TenantDetail }) {
  const trpc = useTRPC();
  const refresh = useRefreshTenant(tenant.name);
  const [confirming, setConfirming] = useState(false);
  const suspend = !tenant.suspended;
  const verb = suspend ? "Suspend" : "Resume";
  const change = useMutation(
    trpc.tenants.setSuspended.mutationOptions({
      onSuccess: (updated) => {
        toast(`Tenant "${updated.name}" ${updated.suspended ? "is being suspended" : "is resuming"}.`);
        setConfirming(false);
        void refresh();
      },
    }),
  );
  const submit = (event: FormEvent) => {
    event.preventDefault();
    change.mutate({ name: tenant.name, suspend });
  };

  return (
    <div className={styles.section}>
      <h3>{suspend ? "Suspend" : "Resume"}</h3>
      <p className={styles.note}>
        {suspend
          ? "Suspending stops the tenant's control plane; its data is kept and kubectl gets no answer until it resumes."
          : "The tenant is suspended: its control plane is stopped and its data kept. Resuming starts it again."}
      </p>
      {confirming ? (
        <form onSubmit={submit} aria-label={`${verb} tenant ${tenant.name}`}>
          <p>
            {verb} tenant <strong>{tenant.name}</strong>?
          </p>
          <p className="toolbar">
            <button type="submit" className="button button-primary" disabled={change.isPending}>
              {change.isPending ? `${verb.replace(/e$/, "")}ing…` : `${verb} ${tenant.name}`}
            </button>
            <button type="button" className="button" onClick={() => setConfirming(false)}>
              Cancel
            </button>
          </p>
          {change.error ? (
            <p className="alert alert-error" role="alert">
              {change.error.message}
            </p>
          ) : null}
        </form>
      ) : (
        <button
          type="button"
          className="button"
          disabled={tenant.deleting}
          onClick={() => {
            change.reset();
            setConfirming(true);
          }}
        >
          {verb}…
        </button>
      )}
    </div>
  );
}

function UpgradeForm({ tenant }: { tenant: TenantDetail }) {
  const trpc = useTRPC();
  const refresh = useRefreshTenant(tenant.name);
  const { data: versions } = useSuspenseQuery(trpc.tenants.versions.queryOptions());
  const choices = versions.filter((version) => !isCurrentVersion(version, tenant));
  const [version, setVersion] = useState(choices[0] ?? "");
  const upgrade = useMutation(
    trpc.tenants.upgrade.mutationOptions({
      onSuccess: (updated) => {
        toast(`Tenant "${updated.name}" is moving to Kubernetes ${updated.version}.`);
        void refresh();
      },
    }),
  );
  const selected = choices.includes(version) ? version : "";
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (selected) upgrade.mutate({ name: tenant.name, version: selected });
  };

  return (
    <form className={styles.section} onSubmit={submit} aria-label={`Upgrade tenant ${tenant.name}`}>
      <h3>Upgrade</h3>
      <p className={styles.note}>
        Moves the control plane to another Kubernetes version Ring0 has binaries for; its data is kept.
      </p>
      <div className="toolbar">
        <label className="field">
          Kubernetes version
          <select value={selected} onChange={(event) => setVersion(event.target.value)}>
            {choices.length === 0 ? <option value="">No other version</option> : null}
            {versions.map((candidate) => (
              <option key={candidate} value={candidate} disabled={isCurrentVersion(candidate, tenant)}>
                {candidate}
                {isCurrentVersion(candidate, tenant) ? " (current)" : ""}
              </option>
            ))}
          </select>
        </label>
        <button type="submit" className="button" disabled={!selected || upgrade.isPending || tenant.deleting}>
          {upgrade.isPending ? "Upgrading…" : "Upgrade"}
        </button>
      </div>
      {choices.length === 0 ? (
        <p className={styles.note}>
          This tenant already runs the only version available ({versions.join(", ")}).
        </p>
      ) : null}
      {upgrade.error ? (
        <p className="alert alert-error" role="alert">
          {upgrade.error.message}
        </p>
      ) : null}
    </form>
  );
}

function DeleteControl({ name }: { name: string }) {
  const router = useRouter();
  const [deleting, setDeleting] = useState(false);
  return (
    <div className={styles.section}>
      <h3>Delete</h3>
      {deleting ? (
        <DeleteTenantForm
          name={name}
          onDone={() => setDeleting(false)}
          onDeleted={() => router.push("/operator/tenants")}
        />
      ) : (
        <button type="button" className="button" onClick={() => setDeleting(true)}>
          Delete {name}…
        </button>
      )}
    </div>
  );
}

/**
 * The tenant control plane's admin kubeconfig, as a plain form post: the browser saves the answer
 * as a file and no script of this page ever holds the credentials.
 */
function BreakGlassForm({ tenant }: { tenant: TenantDetail }) {
  const serving =
    tenant.conditions.some(
      (condition) => condition.type === "ControlPlaneReady" && condition.status === "True",
    ) &&
    !tenant.suspended &&
    !tenant.deleting;
  return (
    <form
      className={styles.section}
      method="post"
      action={`/api/tenants/${encodeURIComponent(tenant.name)}/admin-kubeconfig`}
      aria-label="Break-glass admin kubeconfig"
    >
      <h3>Break-glass admin kubeconfig</h3>
      <p className={styles.note}>
        Downloads a kubeconfig with full admin rights (<code>system:masters</code>) straight to this tenant's
        control plane, past the kube gateway and the tenant's own RBAC. For emergencies only:{" "}
        <strong>every download is audited</strong> (<code>kubeconfig.admin-issue</code>) with your name and
        the reason you give. The file goes to your browser's downloads; this page never sees it.
      </p>
      <label className="field" htmlFor="break-glass-reason">
        Reason (3–500 characters)
      </label>
      <textarea
        id="break-glass-reason"
        name="reason"
        className={styles.reason}
        required
        minLength={3}
        maxLength={500}
      />
      <p className="toolbar">
        <button type="submit" className="button" disabled={!serving}>
          Download admin kubeconfig
        </button>
      </p>
      {serving ? null : (
        <p className={styles.note}>Available while the control plane serves (it is not serving now).</p>
      )}
    </form>
  );
}
