/**
 * Ring0's admission webhook server: one HTTPS listener on 127.0.0.1 that tenant apiservers call
 * (ValidatingWebhookConfigurations Ring0 registers in each tenant control plane). Mutual TLS with
 * the vn-agent PKI: Ring0 serves with the agents' serving certificate (tenant apiservers already
 * trust its CA) and accepts only a tenant apiserver's client certificate (O=ring0:tenant-apiserver,
 * CN=<tenant>, the one its kubelet client uses). The tenant comes from that certificate alone —
 * nothing in the AdmissionReview can name another tenant.
 */

import type { IncomingMessage, ServerResponse } from "node:http";
import type { TLSSocket } from "node:tls";
import type { Logger } from "@/server/logger";
import { createMtlsServer } from "@/server/pki/mtls-server";
import { tenantFromCertificate } from "@/server/vn-agent/identity";
import { type AuthorizationHandler, BadAccessReview, parseAccessReview } from "./authorizer";

/** The parts of an admission.k8s.io/v1 AdmissionRequest Ring0 reads. */
export interface AdmissionRequest {
  uid: string;
  kind: { group: string; version: string; kind: string };
  resource: { group: string; version: string; resource: string };
  subResource?: string;
  name?: string;
  namespace?: string;
  operation: "CREATE" | "UPDATE" | "DELETE" | "CONNECT";
  userInfo?: { username?: string; groups?: string[] };
  object?: unknown;
  oldObject?: unknown;
  dryRun?: boolean;
}

export interface AdmissionVerdict {
  allowed: boolean;
  /** Shown verbatim by kubectl when refused. */
  message?: string;
  /** HTTP-like code of the refusal (403 by default). */
  code?: number;
  warnings?: string[];
}

export type AdmissionHandler = (tenant: string, request: AdmissionRequest) => Promise<AdmissionVerdict>;

export interface WebhookServerOptions {
  tls: { cert: string; key: string; clientCa: string };
  /** Handlers by URL path, e.g. "/validate/quota". */
  handlers: Record<string, AdmissionHandler>;
  /** Authorization webhooks (SubjectAccessReviews) by URL path, e.g. "/authorize". */
  authorizers?: Record<string, AuthorizationHandler>;
  logger: Logger;
  port?: number;
  /** Addresses to listen on besides 127.0.0.1, same port (the pod API address, for API servers in pods). */
  alsoOn?: string[];
  /** Largest AdmissionReview accepted (the API server's own request limit is 3 MiB; objects are at most 1.5 MiB). */
  maxBodyBytes?: number;
}

export interface WebhookServer {
  port: number;
  /** TLS connections accepted so far. */
  handshakes(): number;
  /** Serve new connections with these (a renewed certificate); open ones keep theirs. */
  reloadTls(tls: WebhookServerOptions["tls"]): void;
  stop(): Promise<void>;
}

const DEFAULT_MAX_BODY = 8 * 1024 * 1024;

class BadReview extends Error {}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The request of an AdmissionReview body, or a BadReview saying what is wrong with it. */
export function parseAdmissionReview(body: unknown): { apiVersion: string; request: AdmissionRequest } {
  if (!isRecord(body) || body.kind !== "AdmissionReview") throw new BadReview("not an AdmissionReview");
  const apiVersion = body.apiVersion;
  if (apiVersion !== "admission.k8s.io/v1" && apiVersion !== "admission.k8s.io/v1beta1") {
    throw new BadReview(`unsupported AdmissionReview version ${JSON.stringify(apiVersion)}`);
  }
  const request = body.request;
  if (!isRecord(request)) throw new BadReview("the AdmissionReview has no request");
  if (typeof request.uid !== "string" || request.uid.length === 0 || request.uid.length > 128) {
    throw new BadReview("the AdmissionReview request has no uid");
  }
  if (!isRecord(request.kind) || !isRecord(request.resource) || typeof request.operation !== "string") {
    throw new BadReview("the AdmissionReview request lacks kind, resource or operation");
  }
  return { apiVersion, request: request as unknown as AdmissionRequest };
}

function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        reject(new BadReview(`the AdmissionReview is larger than ${limit} bytes`));
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on("end", () => resolve(Buffer.concat(chunks)));
    req.on("error", reject);
  });
}

function reply(res: ServerResponse, status: number, body: unknown): void {
  const text = typeof body === "string" ? `${body}\n` : JSON.stringify(body);
  res.writeHead(status, {
    "Content-Type": typeof body === "string" ? "text/plain; charset=utf-8" : "application/json",
    "Content-Length": Buffer.byteLength(text),
  });
  res.end(text);
}

export function startWebhookServer(options: WebhookServerOptions): Promise<WebhookServer> {
  const log = options.logger.child({ component: "admission-webhooks" });
  const limit = options.maxBodyBytes ?? DEFAULT_MAX_BODY;

  // A SubjectAccessReview answered: allowed, or no opinion (never denied, and no opinion on any
  // failure, so RBAC's answer stands).
  const authorize = async (
    tenant: string,
    authorizer: AuthorizationHandler,
    req: IncomingMessage,
    res: ServerResponse,
  ) => {
    if (req.method !== "POST") return reply(res, 405, "the authorization webhook takes POST");
    let parsed: ReturnType<typeof parseAccessReview>;
    try {
      parsed = parseAccessReview(JSON.parse((await readBody(req, limit)).toString("utf8")));
    } catch (error) {
      const message =
        error instanceof BadAccessReview || error instanceof BadReview
          ? error.message
          : "the body is not JSON";
      log.warn("malformed SubjectAccessReview", { tenant, message });
      return reply(res, 400, message);
    }
    let allowed = false;
    try {
      allowed = await authorizer(tenant, parsed.spec);
    } catch (error) {
      log.error("authorization handler failed", { tenant, error });
    }
    reply(res, 200, {
      apiVersion: parsed.apiVersion,
      kind: "SubjectAccessReview",
      status: allowed
        ? { allowed: true, reason: "a tenant admin, in a group of the tenant's own" }
        : { allowed: false },
    });
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const socket = req.socket as TLSSocket;
    const identity = socket.authorized
      ? tenantFromCertificate(socket.getPeerCertificate()?.subject)
      : { refused: "the client certificate is not verified" };
    if ("refused" in identity) return reply(res, 403, identity.refused);
    const path = (req.url ?? "/").split("?")[0] ?? "/";
    const authorizers = options.authorizers ?? {};
    const authorizer = Object.hasOwn(authorizers, path) ? authorizers[path] : undefined;
    if (authorizer) return authorize(identity.tenant, authorizer, req, res);
    const handler = Object.hasOwn(options.handlers, path) ? options.handlers[path] : undefined;
    if (!handler) return reply(res, 404, `no admission webhook at ${path}`);
    if (req.method !== "POST") return reply(res, 405, "admission webhooks take POST");
    let parsed: ReturnType<typeof parseAdmissionReview>;
    try {
      parsed = parseAdmissionReview(JSON.parse((await readBody(req, limit)).toString("utf8")));
    } catch (error) {
      const message = error instanceof BadReview ? error.message : "the body is not JSON";
      log.warn("malformed AdmissionReview", { tenant: identity.tenant, message });
      return reply(res, 400, message);
    }
    const { request } = parsed;
    let verdict: AdmissionVerdict;
    try {
      verdict = await handler(identity.tenant, request);
    } catch (error) {
      // Answered (not a transport failure) so the API server shows why; the webhook's failure
      // policy decides for transport failures only.
      log.error("admission handler failed", { tenant: identity.tenant, path, error });
      verdict = {
        allowed: false,
        code: 503,
        message: `Ring0 could not check this request (${error instanceof Error ? error.message : String(error)}); retry in a moment`,
      };
    }
    reply(res, 200, {
      apiVersion: parsed.apiVersion,
      kind: "AdmissionReview",
      response: {
        uid: request.uid,
        allowed: verdict.allowed,
        ...(verdict.allowed
          ? {}
          : {
              status: {
                code: verdict.code ?? 403,
                reason: (verdict.code ?? 403) === 403 ? "Forbidden" : "ServiceUnavailable",
                message: verdict.message ?? "refused",
              },
            }),
        ...(verdict.warnings?.length ? { warnings: verdict.warnings } : {}),
      },
    });
  };

  const mtls = createMtlsServer(options.tls, log, handle);
  return mtls.listen(options.port, options.alsoOn).then((port) => {
    log.info("admission webhooks listening", {
      port,
      paths: [...Object.keys(options.handlers), ...Object.keys(options.authorizers ?? {})],
    });
    return {
      port,
      handshakes: () => mtls.handshakes(),
      reloadTls: (tls) => mtls.reload(tls),
      stop: () => mtls.close(),
    };
  });
}
