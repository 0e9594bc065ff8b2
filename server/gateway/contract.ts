/**
 * What the kube gateway is given and what it offers. Every dependency (token verification, the
 * control plane directory, audit, sharing grants) is injected; server/gateway/index.ts wires the
 * runtime's.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import type { AuditEventInput } from "@/server/audit/repository";
import type { CredentialRechecks } from "@/server/auth/rechecks";
import type { Logger } from "@/server/logger";
import type { GranteeVerdict } from "@/server/sharing/access";
import type { GranteeUser } from "@/server/sharing/grants";
import type { RequestAttributes } from "@/server/sharing/request-info";
import type { GrantUse } from "@/server/sharing/usage";
import type { ControlPlaneDirectory } from "@/server/tenants/control-planes";
import type { VerifiedToken } from "@/server/tokens/service";

export interface KubeGatewayLimits {
  /** Requests per second per token (sustained). */
  ratePerSecond: number;
  /** Requests a token may make at once. */
  burst: number;
  /** Concurrent watches, followed logs and upgrades per token. */
  maxLongRunning: number;
  /** Failed authentications per source address, and per presented token, a minute (default 30). */
  authFailuresPerMinute?: number;
}

/** Sharing grants: how a token of one tenant reaches another (server/sharing/access.ts). */
export interface GatewaySharing {
  verdict(user: GranteeUser, owner: string, attributes: RequestAttributes): Promise<GranteeVerdict>;
  /** Calls `revoke` once the grants stop allowing the request; returns the function that stops watching. */
  watch(user: GranteeUser, owner: string, attributes: RequestAttributes, revoke: () => void): () => void;
  recordUse(use: GrantUse): void;
}

export interface KubeGatewayOptions {
  /** Verifies a Ring0 API token (createTokenService(...).verifyToken). */
  authenticate(plaintext: string): Promise<VerifiedToken | null>;
  /** Verifies again for an open stream's recheck, past any cache `authenticate` keeps (default: it). */
  reauthenticate?(plaintext: string): Promise<VerifiedToken | null>;
  /** Where open streams' tokens are rechecked (default: the gateway's own, every `recheckMs`). */
  rechecks?: CredentialRechecks;
  /** How often open streams' tokens are rechecked when the gateway keeps its own (default 5 s). */
  recheckMs?: number;
  /** Exec and attach sessions end after this long (default 12 h, as RING0_STREAM_MAX_SECONDS). */
  maxExecSessionMs?: number;
  /** The control plane directory in force (read per request: it is installed at start-up). */
  directory(): ControlPlaneDirectory | null;
  limits: KubeGatewayLimits;
  /** Records an audit event; must not throw (recordAudit logs its own failures). */
  audit(event: AuditEventInput): Promise<void>;
  logger: Logger;
  now?: () => number;
  /** Until the tenant API server's response headers (or 101) arrive. */
  responseTimeoutMs?: number;
  /** An exec/attach/port-forward session with no traffic either way for this long is closed. */
  streamIdleTimeoutMs?: number;
  /** Window in which repeated gateway denials of one token produce one audit event. */
  deniedAuditWindowMs?: number;
  /** Without it, a token reaches its own tenant only. */
  sharing?: GatewaySharing;
}

export interface KubeGateway {
  handleRequest(request: IncomingMessage, response: ServerResponse): void;
  handleUpgrade(request: IncomingMessage, socket: Duplex, head: Buffer): void;
  close(): void;
}
