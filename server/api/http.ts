/**
 * tRPC over HTTP (app/api/trpc/[trpc]/route.ts): the fetch adapter behind two walls of the
 * request itself. A state-changing request that acts with the session cookie must come from one
 * of Ring0's own origins (server/auth/origin.ts), and a body is read only up to a cap — refused
 * up front when Content-Length already says more, cut off while streaming otherwise, so no caller
 * can make the server buffer more than the cap. Refusals are tRPC errors, so the portal and the
 * CLI show their message as they show any other.
 */
import { TRPCError } from "@trpc/server";
import { fetchRequestHandler } from "@trpc/server/adapters/fetch";
import { appRouter } from "@/server/api/root";
import { createContext } from "@/server/api/trpc";
import { hasBearer, isSafeMethod, originRefusal } from "@/server/auth/origin";
import { env } from "@/server/env";

export const trpcEndpoint = "/api/trpc";

export interface TrpcHttpSettings {
  allowedOrigins: readonly string[];
  /** Largest request body read, in bytes (RING0_TRPC_MAX_BODY_BYTES). */
  maxBodyBytes: number;
}

export function trpcHttpSettings(): TrpcHttpSettings {
  const config = env();
  return { allowedOrigins: config.allowedOrigins, maxBodyBytes: config.RING0_TRPC_MAX_BODY_BYTES };
}

export function bodyTooLarge(maxBodyBytes: number): TRPCError {
  return new TRPCError({
    code: "PAYLOAD_TOO_LARGE",
    message: `The request body is larger than ${maxBodyBytes} bytes (RING0_TRPC_MAX_BODY_BYTES); send less at once.`,
  });
}

/** Passes a body through until more than `maxBodyBytes` have come, then fails it with a 413. */
export function limitedBody(
  body: ReadableStream<Uint8Array>,
  maxBodyBytes: number,
): ReadableStream<Uint8Array> {
  let seen = 0;
  return body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        seen += chunk.byteLength;
        if (seen > maxBodyBytes) controller.error(bodyTooLarge(maxBodyBytes));
        else controller.enqueue(chunk);
      },
    }),
  );
}

/** The error to answer before any procedure runs, or null. */
export function requestRefusal(request: Request, settings: TrpcHttpSettings): TRPCError | null {
  const headers = request.headers;
  if (!isSafeMethod(request.method)) {
    const problem = originRefusal(
      {
        origin: headers.get("origin"),
        referer: headers.get("referer"),
        bearer: hasBearer(headers.get("authorization")),
      },
      settings.allowedOrigins,
    );
    if (problem) return new TRPCError({ code: "FORBIDDEN", message: problem });
  }
  const declared = Number(headers.get("content-length") ?? 0);
  if (declared > settings.maxBodyBytes) return bodyTooLarge(settings.maxBodyBytes);
  return null;
}

export async function handleTrpcRequest(
  request: Request,
  settings: TrpcHttpSettings = trpcHttpSettings(),
): Promise<Response> {
  const refusal = requestRefusal(request, settings);
  const req =
    refusal || !request.body
      ? request
      : new Request(request.url, {
          method: request.method,
          headers: request.headers,
          body: limitedBody(request.body, settings.maxBodyBytes),
          duplex: "half",
          signal: request.signal,
        } as RequestInit);
  return fetchRequestHandler({
    endpoint: trpcEndpoint,
    req,
    router: appRouter,
    createContext: () => {
      if (refusal) throw refusal;
      return createContext({ headers: req.headers });
    },
  });
}
