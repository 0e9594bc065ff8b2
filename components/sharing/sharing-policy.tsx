"use client";

import { useSuspenseQuery } from "@tanstack/react-query";
import { useTRPC } from "@/components/trpc/client";
import styles from "./sharing.module.css";

const list = (items: readonly string[], none = "none") =>
  items.length === 0
    ? none
    : items.map((item) => (item === "*" ? "every tenant" : item || "core")).join(", ");

/** The operator policy in force, read-only: owners see the limits before they ask. */
export function SharingPolicy({ heading = "Operator policy" }: { heading?: string }) {
  const trpc = useTRPC();
  const { data: policy } = useSuspenseQuery(trpc.sharing.policy.queryOptions());
  return (
    <section
      className={`card ${styles.section}`}
      aria-labelledby="sharing-policy"
      data-testid="sharing-policy"
    >
      <h2 id="sharing-policy">{heading}</h2>
      <dl className={styles.policy}>
        {/* The lists name real tenants: operators only; everyone else sees what concerns their tenant. */}
        {policy.grantors && policy.grantees ? (
          <>
            <dt>May share</dt>
            <dd data-testid="policy-grantors">{list(policy.grantors)}</dd>
            <dt>May receive</dt>
            <dd data-testid="policy-grantees">{list(policy.grantees)}</dd>
          </>
        ) : (
          <>
            <dt>Your tenant may share</dt>
            <dd data-testid="policy-can-grant">{policy.canGrant ? "Yes" : "No"}</dd>
            <dt>Your tenant may receive</dt>
            <dd data-testid="policy-can-receive">{policy.canReceive ? "Yes" : "No"}</dd>
          </>
        )}
        <dt>Approval</dt>
        <dd data-testid="policy-approval">
          {policy.requireApproval ? "An operator approves every grant and every edit" : "Not required"}
        </dd>
        <dt>Longest grant</dt>
        <dd>
          {policy.maxExpiryDays === null ? "No limit; expiry optional" : `${policy.maxExpiryDays} days`}
        </dd>
        <dt>Wildcards</dt>
        <dd>{policy.allowWildcards ? "Allowed" : "Not allowed"}</dd>
        <dt>Verbs</dt>
        <dd>{list(policy.allowedVerbs)}</dd>
        <dt>Never shared</dt>
        <dd>
          Resources {list(policy.deniedResources)}; API groups{" "}
          {list([...policy.deniedApiGroups, ...policy.floorApiGroups])}; cluster-scoped resources; other
          namespaces than those named.
        </dd>
      </dl>
    </section>
  );
}
