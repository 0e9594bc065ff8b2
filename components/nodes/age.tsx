"use client";

import { age } from "@/components/nodes/format";

/** Relative age; server and browser clocks differ by the render delay, so hydration may differ. */
export function Age({ iso }: { iso: string | null }) {
  if (!iso) return <>—</>;
  return (
    <time dateTime={iso} title={iso} suppressHydrationWarning>
      {age(iso)}
    </time>
  );
}
