"use client";

import { useMutation, useQueryClient, useSuspenseQuery } from "@tanstack/react-query";
import { type FormEvent, useState } from "react";
import { OneTimePassword } from "@/components/tenant/one-time-password";
import { useTRPC } from "@/components/trpc/client";
import { actionsHeader, DataTable } from "@/components/ui/data-table";
import { EmptyState } from "@/components/ui/empty-state";
import { Field } from "@/components/ui/field";
import { toast } from "@/components/ui/toast";
import { newAccountInput } from "@/server/core/account-fields";
import { type AssignableRole, RoleField } from "./member-table";

/** With an external IAM there is nothing to manage here: say where accounts live. */
export function ExternalIamNotice({ issuer }: { issuer: string | null }) {
  return (
    <section className="card" aria-label="Accounts">
      <h2>Accounts</h2>
      <p>
        Accounts are managed in your identity provider{issuer ? ` (${issuer})` : ""}: create, disable and
        enable people there. The members above are the people who have signed in to Ring0.
      </p>
    </section>
  );
}

/**
 * Embedded-IAM accounts of the tenant created in Ring0: create one (its temporary password is shown
 * once), disable it (it can no longer sign in and loses access at once) or enable it again.
 */
export function AccountManager({ tenant }: { tenant: string }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const { data: accounts } = useSuspenseQuery(trpc.accounts.list.queryOptions({ tenant }));
  const [issued, setIssued] = useState<{ username: string; password: string } | null>(null);
  const refresh = () =>
    Promise.all([
      queryClient.invalidateQueries({ queryKey: trpc.accounts.list.queryKey() }),
      queryClient.invalidateQueries({ queryKey: trpc.members.list.queryKey() }),
    ]);

  const setDisabled = useMutation(
    trpc.accounts.setDisabled.mutationOptions({
      onSuccess: (account) => {
        toast(`Account "${account?.username}" ${account?.disabled ? "disabled" : "enabled"}.`);
        void refresh();
      },
      onError: (error) => toast(error.message),
    }),
  );

  return (
    <section aria-label="Accounts">
      <h2>Accounts</h2>
      <CreateAccountForm
        tenant={tenant}
        onCreated={(username, password) => {
          setIssued({ username, password });
          void refresh();
        }}
      />
      {issued ? (
        <OneTimePassword
          username={issued.username}
          password={issued.password}
          onDone={() => setIssued(null)}
        />
      ) : null}
      {accounts.length === 0 ? (
        <EmptyState title="No accounts created here yet">
          <p>Accounts you create sign in through Ring0's IAM with a temporary password.</p>
        </EmptyState>
      ) : (
        <DataTable
          label="Accounts"
          rows={accounts}
          rowKey={(account) => account.username}
          columns={[
            { header: "Username", cell: (account) => account.username },
            { header: "Name", cell: (account) => account.name },
            { header: "Email", cell: (account) => account.email },
            { header: "Created by", cell: (account) => account.createdBy },
            {
              header: "Status",
              cell: (account) => (
                <span className={`badge ${account.disabled ? "badge-failure" : "badge-success"}`}>
                  {account.disabled ? "disabled" : "active"}
                </span>
              ),
            },
            {
              header: actionsHeader,
              cell: (account) => (
                <button
                  type="button"
                  className="button"
                  aria-label={`${account.disabled ? "Enable" : "Disable"} ${account.username}`}
                  disabled={setDisabled.isPending}
                  onClick={() =>
                    setDisabled.mutate({ tenant, username: account.username, disabled: !account.disabled })
                  }
                >
                  {account.disabled ? "Enable" : "Disable"}
                </button>
              ),
            },
          ]}
        />
      )}
    </section>
  );
}

function CreateAccountForm({
  tenant,
  onCreated,
}: {
  tenant: string;
  onCreated: (username: string, password: string) => void;
}) {
  const trpc = useTRPC();
  const [name, setName] = useState("");
  const [username, setUsername] = useState("");
  const [email, setEmail] = useState("");
  const [role, setRole] = useState<AssignableRole>("tenant-member");
  const [invalid, setInvalid] = useState<string | null>(null);
  const create = useMutation(
    trpc.accounts.create.mutationOptions({
      onSuccess: (result) => {
        onCreated(result.account.username, result.temporaryPassword);
        setName("");
        setUsername("");
        setEmail("");
      },
    }),
  );
  const submit = (event: FormEvent) => {
    event.preventDefault();
    create.reset();
    // The API's own schema, so mistakes are explained before anything is sent.
    const parsed = newAccountInput.safeParse({ name, username, email, role });
    if (!parsed.success) {
      setInvalid(
        `Invalid input — ${parsed.error.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`).join("; ")}`,
      );
      return;
    }
    setInvalid(null);
    create.mutate({ tenant, ...parsed.data });
  };
  const error = invalid ?? create.error?.message ?? null;
  return (
    <form className="toolbar" onSubmit={submit} aria-label="Create an account" noValidate>
      <Field label="Name">
        <input value={name} onChange={(event) => setName(event.target.value)} autoComplete="off" />
      </Field>
      <Field label="Username">
        <input value={username} onChange={(event) => setUsername(event.target.value)} autoComplete="off" />
      </Field>
      <Field label="Email">
        <input
          type="email"
          value={email}
          onChange={(event) => setEmail(event.target.value)}
          autoComplete="off"
        />
      </Field>
      <RoleField value={role} onChange={setRole} />
      <button type="submit" className="button button-primary" disabled={create.isPending}>
        {create.isPending ? "Creating…" : "Create account"}
      </button>
      {error ? (
        <p className="alert alert-error" role="alert">
          {error}
        </p>
      ) : null}
    </form>
  );
}
