"use client";

import { useSuspenseQuery } from "@tanstack/react-query";
import { useTRPC } from "@/components/trpc/client";
import { PageHeader } from "@/components/ui/page-header";
import { ControlPlaneCard } from "./control-plane-card";
import { KubeconfigDownload } from "./kubeconfig-download";

export function TenantOverview({ tenant }: { tenant: string }) {
  const trpc = useTRPC();
  const { data } = useSuspenseQuery(trpc.tenants.overview.queryOptions({ tenant }));
  return (
    <>
      <PageHeader
        title={`Tenant ${data.tenant}`}
        description="Your tenant's control plane, people and activity."
      />
      <ControlPlaneCard tenant={tenant} />
      <KubeconfigDownload tenant={tenant} />
      <div className="grid">
        <section className="card" aria-label="Members">
          <div className="stat-label">Members</div>
          <div className="stat-value">{data.memberCount}</div>
        </section>
        <section className="card" aria-label="Admins">
          <div className="stat-label">Admins</div>
          <div className="stat-value">{data.adminCount}</div>
        </section>
      </div>
    </>
  );
}
