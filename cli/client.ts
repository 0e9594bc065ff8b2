/** Ring0's tRPC API over HTTP with a bearer token, typed by the server's router. */
import { createTRPCClient, httpLink, TRPCClientError } from "@trpc/client";
import superjson from "superjson";
import type { AppRouter } from "@/server/api/root";
import { CommandError } from "./errors";

export interface Connection {
  url: string;
  token: string;
}

export function createRing0Client({ url, token }: Connection, fetchImpl: typeof fetch = fetch) {
  return createTRPCClient<AppRouter>({
    links: [
      httpLink({
        url: `${url}/api/trpc`,
        transformer: superjson,
        headers: { authorization: `Bearer ${token}`, "user-agent": "ring0-cli" },
        fetch: fetchImpl,
      }),
    ],
  });
}

export type Ring0Client = ReturnType<typeof createRing0Client>;

/** One line a person can act on: the server's own message, or why the server could not be reached. */
export function describeClientError(error: unknown, url: string): CommandError | null {
  if (!(error instanceof TRPCClientError)) return null;
  if (error.data) return new CommandError(oneLine(error.message));
  const cause = error.cause as (Error & { cause?: Error & { code?: string } }) | undefined;
  const reason = cause?.cause?.code ?? cause?.cause?.message ?? cause?.message ?? error.message;
  return new CommandError(oneLine(`cannot talk to Ring0 at ${url}: ${reason}`));
}

export function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, " ").trim();
}
