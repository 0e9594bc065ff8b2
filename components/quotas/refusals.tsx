"use client";

import { useSuspenseInfiniteQuery } from "@tanstack/react-query";
import styles from "@/components/quotas/quotas.module.css";
import { refusalPageSize, refusalPagination } from "@/components/quotas/refusal-query";
import { useTRPC } from "@/components/trpc/client";
import { EmptyState } from "@/components/ui/empty-state";
import { OlderPages } from "@/components/ui/older-pages";

const timeFormat = new Intl.DateTimeFormat("en-GB", {
  dateStyle: "medium",
  timeStyle: "medium",
  timeZone: "UTC",
});

/** Moves the highlight to a limit row (the anchor does the scrolling). */
function highlight(resource: string) {
  for (const row of document.querySelectorAll("[data-highlighted]")) row.removeAttribute("data-highlighted");
  document.getElementById(`limit-${resource}`)?.setAttribute("data-highlighted", "true");
}

/** "Why was this refused": what the quota webhook refused, newest first, each linked to its limit. */
export function QuotaRefusals({ tenant }: { tenant: string }) {
  const trpc = useTRPC();
  const query = useSuspenseInfiniteQuery(
    trpc.quotas.usage.refusals.infiniteQueryOptions(
      { tenant, limit: refusalPageSize },
      { ...refusalPagination, refetchInterval: 15_000 },
    ),
  );
  const refusals = query.data.pages.flatMap((page) => page.items);
  return (
    <section className={styles.section} aria-labelledby="refusals-heading" id="refusals">
      <h2 id="refusals-heading">Why was this refused</h2>
      <p className={styles.muted}>
        Requests the tenant quota refused, as kubectl showed them. Repeats within a minute are counted.
      </p>
      {refusals.length === 0 ? (
        <EmptyState title="No refusals">
          <p>Nothing was refused for going over the tenant quota.</p>
        </EmptyState>
      ) : (
        <ol className={styles.refusals} aria-label="Quota refusals">
          {refusals.map((refusal) => (
            <li key={refusal.id} className={styles.refusal}>
              <div>
                <strong>
                  {refusal.operation.toLowerCase()} {refusal.kind}{" "}
                  {refusal.namespace ? `${refusal.namespace}/` : ""}
                  {refusal.name ?? "(generated name)"}
                </strong>{" "}
                <span className={styles.muted}>
                  by {refusal.user ?? "unknown"} ·{" "}
                  <time dateTime={refusal.lastAt.toISOString()}>{timeFormat.format(refusal.lastAt)} UTC</time>
                  {refusal.count > 1
                    ? ` · ${refusal.count} times since ${timeFormat.format(refusal.firstAt)} UTC`
                    : ""}
                </span>
              </div>
              <pre>{refusal.message}</pre>
              <ul aria-label="Limits exceeded">
                {refusal.exceeded.map((entry) => (
                  <li key={entry.resource}>
                    <a href={`#limit-${entry.resource}`} onClick={() => highlight(entry.resource)}>
                      {entry.resource}
                    </a>
                    : requested {entry.requested}, used {entry.used}, limited {entry.limit}
                  </li>
                ))}
              </ul>
            </li>
          ))}
        </ol>
      )}
      <OlderPages query={query} noun="refusals" />
    </section>
  );
}
