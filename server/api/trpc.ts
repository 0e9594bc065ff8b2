/**
 * tRPC: context → init → procedure tiers. Routers stay thin and pick a tier; authorization is the
 * tier plus named checks from server/core/roles.ts, never ad-hoc conditions in handlers.
 */

import { randomUUID } from "node:crypto";
import { getTRPCErrorFromUnknown, initTRPC, TRPCError } from "@trpc/server";
import superjson from "superjson";
import { ZodError, z } from "zod";
import { bearerCredential } from "@/server/auth/credentials";
import { sessionUserFromCookieHeader } from "@/server/auth/session";
import { isOperator, isTenantAdmin, type SessionUser } from "@/server/core/roles";
import { tenantNameField } from "@/server/core/tenant-name";
import { describeZodError } from "@/server/core/zod-wording";
import { getDb } from "@/server/db/client";
import { env } from "@/server/env";
import { DomainError, UnavailableError } from "@/server/errors";
import { K8sError } from "@/server/k8s/errors";
import { type Logger, logger as rootLogger } from "@/server/logger";
import { actsAsGrantee, decideGranteeAccess } from "@/server/sharing/access";
import type { RequestAttributes } from "@/server/sharing/request-info";
import { tenantForUser } from "@/server/tenants/access";
import { createTokenService } from "@/server/tokens/service";

/** How the caller proved who they are. */
export type Authentication =
  | { method: "session" }
  | {
      method: "token";
      tokenId: string;
      /** The tenant the token was issued for. */
      tenant: string;
      /**
       * The one tenant the call may act on, or null for an operator's token issued for the operator
       * tenant, which acts as the operator everywhere.
       */
      confinedTo: string | null;
    };

export interface Context {
  user: SessionUser | null;
  db: ReturnType<typeof getDb>;
  logger: Logger;
  requestId: string;
  /** Absent for in-process callers (server components, tests), which act as a session. */
  auth?: Authentication;
}

/**
 * Builds the context from request headers (fetch adapter, server components and tests alike). A
 * bearer token, when present, is the only credential considered: a bad one is UNAUTHORIZED and
 * never falls back to the session cookie.
 */
export async function createContext(opts: { headers: Headers }): Promise<Context> {
  const requestId = opts.headers.get("x-request-id")?.slice(0, 100) || randomUUID();
  const db = getDb();
  const bearer = bearerCredential(opts.headers.get("authorization"));
  if (bearer) {
    if ("malformed" in bearer) {
      throw new TRPCError({
        code: "UNAUTHORIZED",
        message: "The Authorization header must carry a Ring0 API token: Authorization: Bearer r0_….",
      });
    }
    const verified = await createTokenService({ db }).verifyToken(bearer.token);
    if (!verified) {
      throw new TRPCError({
        code: "UNAUTHORIZED",
        message:
          "This API token is not valid: it is unknown, expired or revoked, or its owner left its tenant. Issue a new one in the portal (Tokens).",
      });
    }
    const { user, token } = verified;
    const operatorWide = isOperator(user) && token.tenant === env().RING0_OPERATOR_TENANT;
    return {
      user,
      db,
      requestId,
      auth: {
        method: "token",
        tokenId: token.id,
        tenant: token.tenant,
        confinedTo: operatorWide ? null : token.tenant,
      },
      logger: rootLogger.child({ requestId, user: user.subject, token: token.prefix }),
    };
  }
  const user = await sessionUserFromCookieHeader(opts.headers.get("cookie"));
  return {
    user,
    db,
    requestId,
    auth: { method: "session" },
    logger: rootLogger.child({ requestId, user: user?.subject }),
  };
}

/** The tenant a token-authenticated call is confined to, or null when it is not confined. */
export function tokenConfinement(ctx: Pick<Context, "auth">): string | null {
  return ctx.auth?.method === "token" ? ctx.auth.confinedTo : null;
}

const t = initTRPC.context<Context>().create({
  transformer: superjson,
  errorFormatter({ shape, error }) {
    const zodError = error.cause instanceof ZodError ? error.cause : null;
    // Stack traces never leave the server.
    const { stack: _stack, ...data } = shape.data;
    return {
      ...shape,
      message: zodError ? `Invalid input — ${describeZodError(zodError)}` : shape.message,
      data: { ...data, zodError: zodError ? z.flattenError(zodError) : null },
    };
  },
});

const codeForDomainError: Record<DomainError["kind"], TRPCError["code"]> = {
  "not-found": "NOT_FOUND",
  conflict: "CONFLICT",
  forbidden: "FORBIDDEN",
  unauthenticated: "UNAUTHORIZED",
  invalid: "BAD_REQUEST",
  quota: "PRECONDITION_FAILED",
  unavailable: "SERVICE_UNAVAILABLE",
};

/** Kubernetes API statuses → tRPC codes; the API's own message and reason reach the user. */
function codeForK8sStatus(status: number): TRPCError["code"] {
  if (status === 400) return "BAD_REQUEST";
  if (status === 401) return "UNAUTHORIZED";
  if (status === 403) return "FORBIDDEN";
  if (status === 404) return "NOT_FOUND";
  if (status === 409 || status === 410) return "CONFLICT";
  if (status === 422) return "UNPROCESSABLE_CONTENT";
  if (status === 429) return "TOO_MANY_REQUESTS";
  return "SERVICE_UNAVAILABLE";
}

/** Domain, validation and Kubernetes errors as the tRPC errors a person can act on. */
function mappedError(error: TRPCError, ctx: Context, path: string): TRPCError {
  const cause = error.cause;
  if (cause instanceof DomainError) {
    return new TRPCError({ code: codeForDomainError[cause.kind], message: cause.message, cause });
  }
  if (cause instanceof ZodError) {
    // The same readable message for in-process callers as the formatter gives HTTP clients.
    return new TRPCError({
      code: "BAD_REQUEST",
      message: `Invalid input — ${describeZodError(cause)}`,
      cause,
    });
  }
  if (cause instanceof K8sError) {
    const message = cause.reason ? `${cause.message} (Kubernetes: ${cause.reason})` : cause.message;
    return new TRPCError({ code: codeForK8sStatus(cause.status), message, cause });
  }
  if (error.code === "INTERNAL_SERVER_ERROR") {
    ctx.logger.error("procedure failed", { path, error: cause ?? error });
    return new TRPCError({
      code: "INTERNAL_SERVER_ERROR",
      message: `Something went wrong on the server (request ${ctx.requestId}). Try again; if it persists, tell an operator this request id.`,
    });
  }
  return error;
}

/** A subscription's stream, its failures mapped like a query's (they happen after `next()`). */
async function* mappedStream<T>(stream: AsyncIterable<T>, ctx: Context, path: string): AsyncGenerator<T> {
  try {
    yield* stream;
  } catch (error) {
    throw mappedError(getTRPCErrorFromUnknown(error), ctx, path);
  }
}

const isAsyncIterable = (value: unknown): value is AsyncIterable<unknown> =>
  typeof value === "object" && value !== null && Symbol.asyncIterator in value;

/** The one place domain errors become tRPC errors; anything unknown is logged and redacted. */
const errorMapping = t.middleware(async ({ ctx, next, path, type }) => {
  const result = await next();
  if (result.ok) {
    if (type === "subscription" && isAsyncIterable(result.data))
      return { ...result, data: mappedStream(result.data, ctx, path) };
    return result;
  }
  const error = result.error;
  const mapped = mappedError(error, ctx, path);
  if (mapped !== error) throw mapped;
  return result;
});

export const createTRPCRouter = t.router;
export const createCallerFactory = t.createCallerFactory;

export const publicProcedure = t.procedure.use(errorMapping);

/**
 * A token confined to a tenant acts only on that tenant. Members' tokens are confined by their
 * membership already; this is what keeps an operator's token issued for one tenant from reaching
 * the rest: an input naming another tenant reads as not found, and calls naming no tenant (beyond
 * `me`) are refused.
 */
async function enforceTokenConfinement(
  ctx: Context & { user: SessionUser },
  path: string,
  getRawInput: () => Promise<unknown>,
): Promise<void> {
  const confinedTo = tokenConfinement(ctx);
  if (confinedTo === null || !isOperator(ctx.user)) return;
  const raw = await getRawInput().catch(() => undefined);
  const named =
    raw && typeof raw === "object" && "tenant" in raw ? (raw as { tenant: unknown }).tenant : undefined;
  if (typeof named === "string") {
    if (named !== confinedTo)
      throw new TRPCError({ code: "NOT_FOUND", message: `Tenant "${named}" was not found.` });
    return;
  }
  if (path.startsWith("me.")) return;
  throw new TRPCError({
    code: "FORBIDDEN",
    message: `This API token is scoped to tenant "${confinedTo}"; operator actions need a token issued for the operator tenant.`,
  });
}

export const protectedProcedure = publicProcedure.use(async ({ ctx, next, path, getRawInput }) => {
  if (!ctx.user) throw new TRPCError({ code: "UNAUTHORIZED", message: "Sign in to continue." });
  const user = ctx.user;
  await enforceTokenConfinement({ ...ctx, user }, path, getRawInput);
  return next({ ctx: { ...ctx, user } });
});

export const operatorProcedure = protectedProcedure.use(({ ctx, next }) => {
  if (ctx.user.role !== "operator") {
    throw new TRPCError({ code: "FORBIDDEN", message: "Only cluster operators can do this." });
  }
  return next();
});

export const tenantInput = z.object({
  tenant: tenantNameField(),
});

/**
 * Resolves the tenant from the input and checks the caller belongs to it (operators reach all).
 * Non-members get NOT_FOUND, not FORBIDDEN, so a tenant cannot learn that another one exists.
 */
export const tenantProcedure = protectedProcedure.input(tenantInput).use(async ({ ctx, input, next }) => {
  const confinedTo = tokenConfinement(ctx);
  const tenant =
    confinedTo === null || confinedTo === input.tenant
      ? await tenantForUser(ctx.user, input.tenant, ctx.db)
      : null;
  if (!tenant) throw new TRPCError({ code: "NOT_FOUND", message: `Tenant "${input.tenant}" was not found.` });
  return next({ ctx: { ...ctx, tenant } });
});

/**
 * The tenant tier for its admins (and operators) only: `what` they alone may do, in the refusal
 * other members of the tenant get (FORBIDDEN); people of other tenants never get this far
 * (tenantProcedure answers NOT_FOUND).
 */
export function tenantAdminProcedure(what: string) {
  return tenantProcedure.use(({ ctx, next }) => {
    if (!isTenantAdmin(ctx.user, ctx.tenant)) {
      throw new TRPCError({
        code: "FORBIDDEN",
        message: `Only admins of tenant "${ctx.tenant}" (and operators) can ${what}.`,
      });
    }
    return next();
  });
}

/**
 * Like tenantProcedure, and also open to users of other tenants acting under sharing grants
 * (`ctx.grantee`). Such procedures must decide each call with `requireGrant` before they act; the
 * grantee acts as their grantee identity inside the tenant (server/impersonation/as-user.ts).
 */
export const tenantOrGranteeProcedure = protectedProcedure
  .input(tenantInput)
  .use(async ({ ctx, input, next }) => {
    const confinedTo = tokenConfinement(ctx);
    if (actsAsGrantee(ctx.user, input.tenant)) {
      // A token reaches another tenant only as a token of the user's own tenant.
      if (confinedTo !== null && confinedTo !== ctx.user.tenant) {
        throw new TRPCError({ code: "NOT_FOUND", message: `Tenant "${input.tenant}" was not found.` });
      }
      return next({ ctx: { ...ctx, tenant: input.tenant, grantee: true } });
    }
    const tenant =
      confinedTo === null || confinedTo === input.tenant
        ? await tenantForUser(ctx.user, input.tenant, ctx.db)
        : null;
    if (!tenant)
      throw new TRPCError({ code: "NOT_FOUND", message: `Tenant "${input.tenant}" was not found.` });
    return next({ ctx: { ...ctx, tenant, grantee: false } });
  });

/**
 * A grantee's call, decided by the one grantee decision (server/sharing/access.ts): NOT_FOUND,
 * FORBIDDEN with what was asked, or SERVICE_UNAVAILABLE. Members pass through. Returns the grant
 * that allowed it (null for members).
 */
export async function requireGrant(
  ctx: { user: SessionUser; tenant: string; grantee: boolean },
  attributes: RequestAttributes,
): Promise<string | null> {
  if (!ctx.grantee) return null;
  const decision = await decideGranteeAccess(ctx.user, ctx.tenant, attributes, "portal");
  if (decision.kind === "allow") return decision.grant;
  if (decision.kind === "unavailable")
    throw new UnavailableError(decision.message, { cause: decision.cause });
  throw new TRPCError({
    code: decision.kind === "notFound" ? "NOT_FOUND" : "FORBIDDEN",
    message: decision.message,
  });
}
