"use client";

import { useMutation, useQueryClient, useSuspenseQuery } from "@tanstack/react-query";
import { type FormEvent, useState } from "react";
import { Age } from "@/components/nodes/age";
import { useTRPC } from "@/components/trpc/client";
import { actionsHeader, DataTable } from "@/components/ui/data-table";
import { EmptyState } from "@/components/ui/empty-state";
import { Field } from "@/components/ui/field";
import { OneTimeSecret } from "@/components/ui/one-time-secret";
import { toast } from "@/components/ui/toast";

const lifetimes = [
  { days: 7, label: "7 days" },
  { days: 30, label: "30 days" },
  { days: 90, label: "90 days" },
  { days: 365, label: "1 year" },
];

/** Revoked wins over expired; anything else is active. */
function statusOf(token: { revokedAt: Date | string | null; expiresAt: Date | string }) {
  const expired = new Date(token.expiresAt).getTime() <= Date.now();
  return token.revokedAt ? "revoked" : expired ? "expired" : "active";
}

/**
 * A tenant's API tokens (what kubeconfigs and the CLI carry to Ring0's gateway): create one, see
 * its secret exactly once, list and revoke. Tenant admins see all of the tenant's tokens, others
 * their own.
 */
export function TokenManager({ tenant }: { tenant: string }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const { data: tokens } = useSuspenseQuery(trpc.tokens.list.queryOptions({ tenant }));
  const [name, setName] = useState("");
  const [days, setDays] = useState(30);
  const [issued, setIssued] = useState<{ token: string; name: string } | null>(null);
  const refresh = () => queryClient.invalidateQueries({ queryKey: trpc.tokens.list.queryKey() });

  const create = useMutation(
    trpc.tokens.create.mutationOptions({
      onSuccess: (result) => {
        setIssued({ token: result.token, name });
        setName("");
        void refresh();
      },
    }),
  );
  const revoke = useMutation(
    trpc.tokens.revoke.mutationOptions({
      onSuccess: (row) => {
        toast(`Token "${row.name}" revoked.`);
        void refresh();
      },
    }),
  );

  const submit = (event: FormEvent) => {
    event.preventDefault();
    create.mutate({ tenant, name, expiresInDays: days });
  };

  return (
    <>
      <form className="toolbar" onSubmit={submit} aria-label="Create a token">
        <Field label="Token name">
          <input value={name} onChange={(event) => setName(event.target.value)} maxLength={64} required />
        </Field>
        <Field label="Expires after">
          <select value={days} onChange={(event) => setDays(Number(event.target.value))}>
            {lifetimes.map((lifetime) => (
              <option key={lifetime.days} value={lifetime.days}>
                {lifetime.label}
              </option>
            ))}
          </select>
        </Field>
        <button type="submit" className="button button-primary" disabled={create.isPending}>
          {create.isPending ? "Creating…" : "Create token"}
        </button>
      </form>

      {issued ? (
        <OneTimeSecret
          title="New token"
          label="Token"
          secret={issued.token}
          copiedMessage="Token copied."
          onDone={() => setIssued(null)}
        >
          Copy the token "{issued.name}" now: Ring0 keeps only its hash and cannot show it again.
        </OneTimeSecret>
      ) : null}

      {tokens.length === 0 ? (
        <EmptyState title="No tokens yet">
          <p>Tokens let kubectl and the ring0 CLI reach this tenant through Ring0.</p>
        </EmptyState>
      ) : (
        <DataTable
          label="Tokens"
          rows={tokens.map((token) => ({ ...token, status: statusOf(token) }))}
          rowKey={(token) => token.id}
          columns={[
            { header: "Name", cell: (token) => token.name },
            { header: "Token", cell: (token) => <code>{token.prefix}…</code> },
            { header: "Owner", cell: (token) => token.ownerName },
            {
              header: "Created",
              cell: (token) => (
                <>
                  <Age iso={new Date(token.createdAt).toISOString()} /> ago
                </>
              ),
            },
            {
              header: "Expires",
              cell: (token) => (
                <time dateTime={new Date(token.expiresAt).toISOString()}>
                  {new Date(token.expiresAt).toISOString().slice(0, 10)}
                </time>
              ),
            },
            {
              header: "Last used",
              cell: (token) =>
                token.lastUsedAt ? <Age iso={new Date(token.lastUsedAt).toISOString()} /> : "never",
            },
            {
              header: "Status",
              cell: (token) => (
                <span className={`badge ${token.status === "active" ? "badge-success" : "badge-failure"}`}>
                  {token.status}
                </span>
              ),
            },
            {
              header: actionsHeader,
              cell: (token) =>
                token.status === "active" ? (
                  <button
                    type="button"
                    className="button"
                    aria-label={`Revoke ${token.name}`}
                    disabled={revoke.isPending}
                    onClick={() => revoke.mutate({ id: token.id })}
                  >
                    Revoke
                  </button>
                ) : null,
            },
          ]}
        />
      )}
    </>
  );
}
