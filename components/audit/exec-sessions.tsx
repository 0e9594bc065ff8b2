"use client";

import { useQuery, useSuspenseInfiniteQuery } from "@tanstack/react-query";
import { Suspense, useState } from "react";
import { auditDateFormat, auditPageSize, auditPagination } from "@/components/audit/audit-query";
import { OlderPages } from "@/components/audit/older-pages";
import { useTRPC } from "@/components/trpc/client";
import { EmptyState } from "@/components/ui/empty-state";

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
  if (sessions.length === 0) {
    return (
      <EmptyState title="No shell sessions yet">
        <p>Every shell opened from a pod page is recorded here: who, where, when and how it ended.</p>
      </EmptyState>
    );
  }
  return (
    <>
      <table className="data" aria-label="Shell sessions">
        <thead>
          <tr>
            <th scope="col">Started (UTC)</th>
            <th scope="col">Who</th>
            {showTenant ? <th scope="col">Tenant</th> : null}
            <th scope="col">Pod</th>
            <th scope="col">Duration</th>
            <th scope="col">Ended</th>
            <th scope="col">In / out</th>
            <th scope="col">Transcript</th>
          </tr>
        </thead>
        <tbody>
          {sessions.map((session) => (
            <tr key={session.id}>
              <td>
                <time dateTime={session.startedAt.toISOString()}>
                  {auditDateFormat.format(session.startedAt)}
                </time>
              </td>
              <td>
                {session.userName}
                <span className="whoami-meta"> ({session.userTenant})</span>
              </td>
              {showTenant ? <td>{session.tenant ?? "super cluster"}</td> : null}
              <td>
                <code>
                  {session.namespace}/{session.pod}
                  {session.container ? `/${session.container}` : ""}
                </code>
              </td>
              <td>{duration(session.startedAt, session.endedAt)}</td>
              <td>
                {session.exitCode !== null ? `exit code ${session.exitCode}` : (session.endReason ?? "—")}
              </td>
              <td>
                {bytes(session.bytesIn)} / {bytes(session.bytesOut)}
              </td>
              <td>
                {session.hasTranscript ? (
                  <button
                    type="button"
                    className="button"
                    onClick={() => setOpen(open === session.id ? null : session.id)}
                  >
                    {open === session.id ? "Hide" : "Show"}
                  </button>
                ) : (
                  "—"
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
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
