"use client";

import { useSuspenseQuery } from "@tanstack/react-query";
import { useTRPC } from "@/components/trpc/client";
import { EmptyState } from "@/components/ui/empty-state";

const roleLabel = {
  operator: "Operator",
  "tenant-admin": "Admin",
  "tenant-member": "Member",
  "tenant-viewer": "Viewer",
} as const;

export function MemberTable({ tenant }: { tenant: string }) {
  const trpc = useTRPC();
  const members = useSuspenseQuery(trpc.tenants.members.queryOptions({ tenant }));
  if (members.data.length === 0) {
    return (
      <EmptyState title="No members yet">
        <p>People appear here after their first sign-in.</p>
      </EmptyState>
    );
  }
  return (
    <table className="data" aria-label="Members">
      <thead>
        <tr>
          <th scope="col">Name</th>
          <th scope="col">Email</th>
          <th scope="col">Role</th>
          <th scope="col">Last sign-in (UTC)</th>
        </tr>
      </thead>
      <tbody>
        {members.data.map((member) => (
          <tr key={member.userId}>
            <td>{member.name}</td>
            <td>{member.email ?? "—"}</td>
            <td>{roleLabel[member.role]}</td>
            <td>
              {member.lastLoginAt ? member.lastLoginAt.toISOString().replace("T", " ").slice(0, 19) : "—"}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
