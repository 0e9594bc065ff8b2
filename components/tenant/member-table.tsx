"use client";

import { useMutation, useQueryClient, useSuspenseQuery } from "@tanstack/react-query";
import { type FormEvent, useState } from "react";
import { useTRPC } from "@/components/trpc/client";
import { EmptyState } from "@/components/ui/empty-state";
import { toast } from "@/components/ui/toast";
import { assignableRoles } from "@/server/core/roles";

export const roleLabel = {
  operator: "Operator",
  "tenant-admin": "Admin",
  "tenant-member": "Member",
  "tenant-viewer": "Viewer",
} as const;

export type AssignableRole = (typeof assignableRoles)[number];

/** The role a member is given: the roles an admin may assign, by their labels. */
export function RoleField({
  value,
  onChange,
}: {
  value: AssignableRole;
  onChange: (role: AssignableRole) => void;
}) {
  return (
    <label className="field">
      Role
      <select value={value} onChange={(event) => onChange(event.target.value as AssignableRole)}>
        {assignableRoles.map((candidate) => (
          <option key={candidate} value={candidate}>
            {roleLabel[candidate]}
          </option>
        ))}
      </select>
    </label>
  );
}

const utc = (date: Date) => date.toISOString().replace("T", " ").slice(0, 16);

/**
 * The tenant's members. Admins (and operators) change roles — a role set here is kept across
 * sign-ins instead of following the IAM — remove members and invite people of the tenant's IAM.
 */
export function MemberTable({ tenant }: { tenant: string }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const { data } = useSuspenseQuery(trpc.members.list.queryOptions({ tenant }));
  const refresh = () => queryClient.invalidateQueries({ queryKey: trpc.members.list.queryKey() });

  const setRole = useMutation(
    trpc.members.setRole.mutationOptions({
      onSuccess: (member) => {
        toast(`${member.name} is now ${roleLabel[member.role]}.`);
        void refresh();
      },
      onError: (error) => toast(error.message),
    }),
  );
  const remove = useMutation(
    trpc.members.remove.mutationOptions({
      onSuccess: (member) => {
        toast(`${member.name} was removed from ${tenant}.`);
        void refresh();
      },
      onError: (error) => toast(error.message),
    }),
  );

  return (
    <>
      {data.canManage ? <InviteForm tenant={tenant} external={data.iam.kind === "external"} /> : null}
      {data.members.length === 0 ? (
        <EmptyState title="No members yet">
          <p>People appear here after their first sign-in.</p>
        </EmptyState>
      ) : (
        <table className="data" aria-label="Members">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Email</th>
              <th scope="col">Role</th>
              <th scope="col">Role set by</th>
              <th scope="col">Last sign-in (UTC)</th>
              {data.canManage ? (
                <th scope="col">
                  <span className="sr-only">Actions</span>
                </th>
              ) : null}
            </tr>
          </thead>
          <tbody>
            {data.members.map((member) => {
              const editable = data.canManage && member.role !== "operator";
              return (
                <tr key={member.userId}>
                  <td>
                    {member.name}
                    {member.disabled ? (
                      <>
                        {" "}
                        <span className="badge badge-failure">disabled</span>
                      </>
                    ) : null}
                  </td>
                  <td>{member.email ?? "—"}</td>
                  <td>
                    {editable ? (
                      <select
                        aria-label={`Role of ${member.name}`}
                        value={member.role}
                        disabled={setRole.isPending}
                        onChange={(event) =>
                          setRole.mutate({
                            tenant,
                            userId: member.userId,
                            role: event.target.value as (typeof assignableRoles)[number],
                          })
                        }
                      >
                        {assignableRoles.map((role) => (
                          <option key={role} value={role}>
                            {roleLabel[role]}
                          </option>
                        ))}
                      </select>
                    ) : (
                      roleLabel[member.role]
                    )}
                  </td>
                  <td>
                    {member.roleSource === "ring0"
                      ? `${member.roleSetBy ?? "Ring0"}${member.roleSetAt ? `, ${utc(member.roleSetAt)}` : ""}`
                      : "IAM (on sign-in)"}
                  </td>
                  <td>{member.lastLoginAt ? utc(member.lastLoginAt) : "—"}</td>
                  {data.canManage ? (
                    <td>
                      {editable ? (
                        <button
                          type="button"
                          className="button"
                          aria-label={`Remove ${member.name}`}
                          disabled={remove.isPending}
                          onClick={() => remove.mutate({ tenant, userId: member.userId })}
                        >
                          Remove
                        </button>
                      ) : null}
                    </td>
                  ) : null}
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
    </>
  );
}

function InviteForm({ tenant, external }: { tenant: string; external: boolean }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [username, setUsername] = useState("");
  const [role, setRole] = useState<AssignableRole>("tenant-member");
  const invite = useMutation(
    trpc.members.invite.mutationOptions({
      onSuccess: (member) => {
        toast(`${member.name} is now a member (${roleLabel[member.role]}).`);
        setUsername("");
        void queryClient.invalidateQueries({ queryKey: trpc.members.list.queryKey() });
      },
    }),
  );
  const submit = (event: FormEvent) => {
    event.preventDefault();
    invite.mutate({ tenant, username, role });
  };
  return (
    <form className="toolbar" onSubmit={submit} aria-label="Invite a member">
      <label className="field">
        {external ? "Subject or email (signed in before)" : "Username of an account of this tenant"}
        <input
          value={username}
          onChange={(event) => setUsername(event.target.value)}
          required
          maxLength={200}
        />
      </label>
      <RoleField value={role} onChange={setRole} />
      <button type="submit" className="button button-primary" disabled={invite.isPending}>
        {invite.isPending ? "Inviting…" : "Invite"}
      </button>
      {invite.error ? (
        <p className="alert alert-error" role="alert">
          {invite.error.message}
        </p>
      ) : null}
    </form>
  );
}
