"use client";

import { useMutation, useQueryClient, useSuspenseQuery } from "@tanstack/react-query";
import { type FormEvent, useState } from "react";
import { Age } from "@/components/nodes/age";
import { useTRPC } from "@/components/trpc/client";
import { EmptyState } from "@/components/ui/empty-state";
import { OneTimeSecret } from "@/components/ui/one-time-secret";
import { toast } from "@/components/ui/toast";

const lifetimes = [
  { days: 7, label: "7 days" },
  { days: 30, label: "30 days" },
  { days: 90, label: "90 days" },
  { days: 365, label: "1 year" },
];

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
        <label className="field">
          Token name
          <input value={name} onChange={(event) => setName(event.target.value)} maxLength={64} required />
        </label>
        <label className="field">
          Expires after
          <select value={days} onChange={(event) => setDays(Number(event.target.value))}>
            {lifetimes.map((lifetime) => (
              <option key={lifetime.days} value={lifetime.days}>
                {lifetime.label}
              </option>
            ))}
          </select>
        </label>
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
        <table className="data" aria-label="Tokens">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Token</th>
              <th scope="col">Owner</th>
              <th scope="col">Created</th>
              <th scope="col">Expires</th>
              <th scope="col">Last used</th>
              <th scope="col">Status</th>
              <th scope="col">
                <span className="sr-only">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {tokens.map((token) => {
              const expired = new Date(token.expiresAt).getTime() <= Date.now();
              const status = token.revokedAt ? "revoked" : expired ? "expired" : "active";
              return (
                <tr key={token.id}>
                  <td>{token.name}</td>
                  <td>
                    <code>{token.prefix}…</code>
                  </td>
                  <td>{token.ownerName}</td>
                  <td>
                    <Age iso={new Date(token.createdAt).toISOString()} /> ago
                  </td>
                  <td>
                    <time dateTime={new Date(token.expiresAt).toISOString()}>
                      {new Date(token.expiresAt).toISOString().slice(0, 10)}
                    </time>
                  </td>
                  <td>
                    {token.lastUsedAt ? <Age iso={new Date(token.lastUsedAt).toISOString()} /> : "never"}
                  </td>
                  <td>
                    <span className={`badge ${status === "active" ? "badge-success" : "badge-failure"}`}>
                      {status}
                    </span>
                  </td>
                  <td>
                    {status === "active" ? (
                      <button
                        type="button"
                        className="button"
                        aria-label={`Revoke ${token.name}`}
                        disabled={revoke.isPending}
                        onClick={() => revoke.mutate({ id: token.id })}
                      >
                        Revoke
                      </button>
                    ) : null}
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
    </>
  );
}
