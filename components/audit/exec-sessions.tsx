"use client";

import { useQuery, useSuspenseInfiniteQuery } from "@tanstack/react-query";
import { Suspense, useState } from "react";
import { auditDateFormat, auditPageSize, auditPagination } from "@/components/audit/audit-query";
import { useTRPC } from "@/components/trpc/client";
import { DataTable } from "@/components/ui/data-table";
import { EmptyState } from "@/components/ui/empty-state";
import { OlderPages } from "@/components/ui/older-pages";

function duration(start: Date, end: Date | null): string {
  if (!end) return "open";
  const seconds = Math.max(0, Math.round((end.getTime() - start.getTime()) / 1000));
  return seconds < 60 ? `${seconds} s` : `${Math.floor(seconds / 60)} min ${seconds % 60} s`;
}

function bytes(n: number): string {
  return n < 1024
    ? `${n} B`
    : n < 1024 * 1024
      ? `${(n / 1024).toFixed(1)} KiB`
      : `${(n / 1048576).toFixed(1)} MiB`;
}

/** Browser shell sessions: who opened a shell where, for how long, and how it ended. */
export function ExecSessions({ tenant, showTenant }: { tenant?: string; showTenant: boolean }) {
  return (
    <section aria-label="Shell sessions">
      <h2>Shell sessions</h2>
      <Suspense fallback={<p role="status">Loading shell sessions…</p>}>
        <SessionsTable tenant={tenant} showTenant={showTenant} />
      </Suspense>
    </section>
  );
}

function SessionsTable({ tenant, showTenant }: { tenant?: string; showTenant: boolean }) {
  const trpc = useTRPC();
  const [open, setOpen] = useState<string | null>(null);
  const query = useSuspenseInfiniteQuery(
    trpc.audit.execSessions.infiniteQueryOptions({ tenant, limit: auditPageSize }, auditPagination),
  );
  const sessions = query.data.pages.flatMap((page) => page.sessions);
  type ExecSession = (typeof sessions)[number];
  if (sessions.length === 0) {
    return (
      <EmptyState title="No shell sessions yet">
        <p>Every shell opened from a pod page is recorded here: who, where, when and how it ended.</p>
      </EmptyState>
    );
  }
  return (
    <>
      <DataTable
        label="Shell sessions"
        rows={sessions}
        rowKey={(session) => session.id}
        columns={[
          {
            header: "Started (UTC)",
            cell: (session) => (
              <time dateTime={session.startedAt.toISOString()}>
                {auditDateFormat.format(session.startedAt)}
              </time>
            ),
          },
          {
            header: "Who",
            cell: (session) => (
              <>
                {session.userName}
                <span className="whoami-meta"> ({session.userTenant})</span>
              </>
            ),
          },
          ...(showTenant
            ? [{ header: "Tenant", cell: (session: ExecSession) => session.tenant ?? "super cluster" }]
            : []),
          {
            header: "Pod",
            cell: (session) => (
              <code>
                {session.namespace}/{session.pod}
                {session.container ? `/${session.container}` : ""}
              </code>
            ),
          },
          { header: "Duration", cell: (session) => duration(session.startedAt, session.endedAt) },
          {
            header: "Ended",
            cell: (session) =>
              session.exitCode !== null ? `exit code ${session.exitCode}` : (session.endReason ?? "—"),
          },
          {
            header: "In / out",
            cell: (session) => (
              <>
                {bytes(session.bytesIn)} / {bytes(session.bytesOut)}
              </>
            ),
          },
          {
            header: "Transcript",
            cell: (session) =>
              session.hasTranscript ? (
                <button
                  type="button"
                  className="button"
                  onClick={() => setOpen(open === session.id ? null : session.id)}
                >
                  {open === session.id ? "Hide" : "Show"}
                </button>
              ) : (
                "—"
              ),
          },
        ]}
      />
      {open ? <Transcript id={open} /> : null}
      <OlderPages query={query} noun="sessions" />
    </>
  );
}

/** Control sequences stripped: the transcript reads as the terminal's text. */
function plain(text: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: terminal escape sequences are the point
  return text.replace(/\u001b\[[0-9;?]*[A-Za-z]|\u001b\][^\u0007]*\u0007|\r/g, "");
}

function Transcript({ id }: { id: string }) {
  const trpc = useTRPC();
  const transcript = useQuery(trpc.audit.execTranscript.queryOptions({ id }));
  if (transcript.isPending) return <p role="status">Loading the transcript…</p>;
  if (transcript.error) return <p role="alert">{transcript.error.message}</p>;
  return (
    <figure>
      <figcaption>Transcript</figcaption>
      <pre className="transcript">{plain(transcript.data.text)}</pre>
    </figure>
  );
}
