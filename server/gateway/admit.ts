/**
 * Admission: everything before a byte goes upstream, in the order that is the gateway's security
 * argument (gateway.ts). Each check is a small function that answers a Denial or lets the request
 * go on; the request's record learns what each check found, for its log line and audit event.
 */

import type { IncomingMessage } from "node:http";
import type { HeldCredential } from "@/server/auth/rechecks";
import { stillStartingMessage } from "@/server/core/start-state";
import { createUpstreamPool, type Upstream } from "@/server/k8s/upstream-pool";
import { actsAsGrantee, decideGranteeAccess } from "@/server/sharing/access";
import { ambiguousQuery, requestAttributes } from "@/server/sharing/request-info";
import type { ControlPlaneLookup } from "@/server/tenants/control-planes";
import { hashToken, tokenPrefix } from "@/server/tokens/format";
import type { VerifiedToken } from "@/server/tokens/service";
import type { KubeGatewayOptions } from "./contract";
import { asksToImpersonate, bearerToken, IMPERSONATION_REFUSED } from "./headers";
import { type GatewayPath, isUnprefixedApiPath, parseGatewayPath, parseUnprefixedPath } from "./path";
import { createAuthFailureLimiter, createConcurrencyLimiter, createRateLimiter } from "./rate-limit";
import type { RequestRecord } from "./request-record";
import { isLongRunning } from "./requests";

export type Denial = { denied: true; code: number; message: string; retryAfterSeconds?: number };

export interface Admitted {
  denied: false;
  tenant: string;
  apiPath: string;
  upstreamPath: string;
  verified: VerifiedToken;
  /** The token as open streams hold it, to be rechecked while they last. */
  credential: HeldCredential;
  /** A watch, a followed log or an upgrade: it stays open, so its right is rechecked. */
  longRunning: boolean;
  upstream: Upstream;
  release: () => void;
}

type RequestPath = Extract<GatewayPath, { ok: true }>;
type ServingControlPlane = Extract<ControlPlaneLookup, { state: "ready" }>;

function deny(code: number, message: string, retryAfterSeconds?: number): Denial {
  return { denied: true, code, message, retryAfterSeconds };
}

function isDenial<T>(result: T | Denial): result is Denial {
  return (result as Partial<Denial> | null)?.denied === true;
}

/** Another tenant reads exactly like a missing one. */
const notFound = (tenant: string) => deny(404, `tenant "${tenant}" not found`);

export type AdmissionOptions = Pick<
  KubeGatewayOptions,
  "authenticate" | "reauthenticate" | "directory" | "limits" | "logger" | "sharing"
> & { now: () => number };

export function createAdmission(options: AdmissionOptions) {
  const { now, logger: log } = options;
  const rate = createRateLimiter({
    ratePerSecond: options.limits.ratePerSecond,
    burst: options.limits.burst,
    now,
  });
  const longRunning = createConcurrencyLimiter(options.limits.maxLongRunning);
  const authFailures = createAuthFailureLimiter({
    failuresPerMinute: options.limits.authFailuresPerMinute ?? 30,
    now,
  });
  const reauthenticate = options.reauthenticate ?? options.authenticate;
  const pool = createUpstreamPool();

  /**
   * 1. The path, strictly: nothing is looked up yet. An unprefixed API path is checked as one of
   * a placeholder tenant's, and goes to the token's own tenant once the token is known (never a
   * grant's: that needs the tenant in the path).
   */
  function checkPath(request: IncomingMessage, record: RequestRecord): Denial | RequestPath {
    const parsed = isUnprefixedApiPath(request.url)
      ? parseUnprefixedPath(request.url, "unprefixed")
      : parseGatewayPath(request.url);
    if (!parsed.ok) return deny(parsed.status, parsed.message);
    record.apiPath = parsed.apiPath;
    record.requestedTenant = parsed.tenant;
    return parsed;
  }

  /** 2. The bearer token, unless its address or the token itself failed too often. */
  async function checkToken(
    request: IncomingMessage,
    record: RequestRecord,
  ): Promise<Denial | { verified: VerifiedToken; credential: HeldCredential }> {
    const plaintext = bearerToken(request.headers);
    if (!plaintext) {
      return deny(401, "Unauthorized: send a Ring0 API token as Authorization: Bearer r0_…");
    }
    // Failed authentications are counted by address and by token; over budget, nothing is looked up.
    const address = request.socket.remoteAddress ?? "unknown";
    const tokenKey = hashToken(plaintext);
    const prefix = tokenPrefix(plaintext);
    const held = authFailures.refusal(address, tokenKey, prefix);
    if (held) {
      return deny(
        429,
        `Too many failed authentications from this address or with this token; retry after ${held.retryAfterSeconds}s.`,
        held.retryAfterSeconds,
      );
    }
    let verified: VerifiedToken | null;
    try {
      verified = await options.authenticate(plaintext);
    } catch (error) {
      log.error("kube gateway could not verify a token", { error });
      return deny(503, "Ring0 cannot verify API tokens right now; try again shortly.");
    }
    if (!verified) {
      authFailures.failed(address, tokenKey, prefix);
      return deny(401, "Unauthorized: the Ring0 API token is invalid, expired or revoked.");
    }
    authFailures.succeeded(tokenKey);
    record.verified = verified;
    const credential: HeldCredential = {
      key: `token:${verified.token.id}`,
      current: async () => (await reauthenticate(plaintext))?.user ?? null,
    };
    return { verified, credential };
  }

  /**
   * 3. A token reaches its own tenant, and another only within a live sharing grant; without one,
   * any other tenant reads exactly like a missing one.
   */
  async function checkTenant(
    record: RequestRecord,
    parsed: RequestPath,
    verified: VerifiedToken,
  ): Promise<Denial | { grantee: boolean }> {
    const grantee = verified.token.tenant !== parsed.tenant;
    if (grantee) {
      const sharing = options.sharing;
      const user = verified.user;
      if (!sharing || !actsAsGrantee(user, parsed.tenant) || user.tenant !== verified.token.tenant)
        return notFound(parsed.tenant);
      if (ambiguousQuery(parsed.upstreamPath.split("?").slice(1).join("?"))) {
        return deny(
          400,
          "Bad request: a query with ';' or a malformed %-escape is ambiguous; send a plain one.",
        );
      }
      const attributes = requestAttributes(record.method, parsed.apiPath, parsed.query, record.upgrade);
      const access = await decideGranteeAccess(user, parsed.tenant, attributes, "kubectl", sharing);
      if (access.kind === "unavailable") {
        log.error("kube gateway could not read sharing grants", { error: access.cause });
        return deny(503, access.message);
      }
      if (access.kind === "notFound") return notFound(parsed.tenant);
      record.tenant = parsed.tenant;
      record.attributes = attributes;
      if (access.kind === "forbidden") return deny(403, access.message);
      record.grant = access.grant;
    }
    record.tenant = parsed.tenant;
    return { grantee };
  }

  /** 4. The token's request rate. */
  function checkRate(verified: VerifiedToken): Denial | null {
    const decision = rate.take(verified.token.id);
    if (decision.allowed) return null;
    return deny(
      429,
      `Too many requests with this Ring0 API token; retry after ${decision.retryAfterSeconds}s.`,
      decision.retryAfterSeconds,
    );
  }

  /** 5. The tenant's control plane, serving. */
  async function findControlPlane(tenant: string, grantee: boolean): Promise<Denial | ServingControlPlane> {
    // Until the tenants' runtime is up (admission webhooks, Tenant informers), no request goes on.
    const starting = stillStartingMessage("tenants");
    if (starting) return deny(503, starting);
    const directory = options.directory();
    if (!directory) return deny(503, "Tenant control planes are not available yet; try again shortly.");
    let lookup: ControlPlaneLookup;
    try {
      lookup = await directory.lookup(tenant);
    } catch (error) {
      log.error("kube gateway could not look up a control plane", { tenant, error });
      return deny(503, `The control plane of tenant "${tenant}" cannot be reached right now.`);
    }
    if (lookup.state === "absent") {
      pool.drop(tenant);
      return notFound(tenant);
    }
    if (lookup.state === "unavailable") {
      // A grantee (admitted above by a grant) learns the phase only: why the owner's control
      // plane is not serving is the owner's and the operators' to read.
      return deny(
        503,
        grantee
          ? `The control plane of tenant "${tenant}" is not serving right now (${lookup.phase}); try again later.`
          : `The control plane of tenant "${tenant}" is not serving (${lookup.phase}): ${lookup.message}`,
        // A Degraded control plane is being healed by Ring0: clients that honour it retry shortly.
        lookup.phase === "Degraded" ? 2 : undefined,
      );
    }
    return lookup;
  }

  /** 6. A slot for what stays open (watches, followed logs, upgrades); `release` frees it. */
  function holdLongRunning(
    record: RequestRecord,
    parsed: RequestPath,
    verified: VerifiedToken,
  ): Denial | { long: boolean; release: () => void } {
    const long = record.upgrade || isLongRunning(record.method, parsed.apiPath, parsed.query);
    if (!long) return { long, release: () => {} };
    const release = longRunning.acquire(verified.token.id);
    if (!release) {
      return deny(
        429,
        `Too many concurrent watches and sessions with this Ring0 API token (limit ${options.limits.maxLongRunning}).`,
        5,
      );
    }
    return { long, release };
  }

  /** 7. The tenant's agent, built from its control plane's access. */
  function upstreamOf(
    tenant: string,
    controlPlane: ServingControlPlane,
    release: () => void,
  ): Denial | Upstream {
    try {
      return pool.get(tenant, controlPlane.access);
    } catch (error) {
      release();
      log.error("kube gateway cannot use a control plane's access", { tenant, error });
      return deny(502, `The control plane of tenant "${tenant}" is misconfigured.`);
    }
  }

  /** Every check in order; on success the caller must call `release`. */
  async function admit(request: IncomingMessage, record: RequestRecord): Promise<Denial | Admitted> {
    let parsed = checkPath(request, record);
    if (isDenial(parsed)) return parsed;
    const token = await checkToken(request, record);
    if (isDenial(token)) return token;
    const { verified, credential } = token;
    if (isUnprefixedApiPath(request.url)) {
      const own = parseUnprefixedPath(request.url, verified.token.tenant);
      if (!own.ok) return deny(own.status, own.message);
      parsed = own;
      record.requestedTenant = own.tenant;
    }
    const tenant = await checkTenant(record, parsed, verified);
    if (isDenial(tenant)) return tenant;
    const limited = checkRate(verified);
    if (limited) return limited;
    if (asksToImpersonate(request.headers)) return deny(403, IMPERSONATION_REFUSED);
    const controlPlane = await findControlPlane(parsed.tenant, tenant.grantee);
    if (isDenial(controlPlane)) return controlPlane;
    const slot = holdLongRunning(record, parsed, verified);
    if (isDenial(slot)) return slot;
    const upstream = upstreamOf(parsed.tenant, controlPlane, slot.release);
    if (isDenial(upstream)) return upstream;
    return {
      denied: false,
      tenant: parsed.tenant,
      apiPath: parsed.apiPath,
      upstreamPath: parsed.upstreamPath,
      verified,
      credential,
      longRunning: slot.long,
      upstream,
      release: slot.release,
    };
  }

  return {
    admit,
    close(): void {
      pool.close();
    },
  };
}

export type Admission = ReturnType<typeof createAdmission>;
