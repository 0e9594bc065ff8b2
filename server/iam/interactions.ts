/**
 * The embedded IAM's interaction routes (`/interaction/<uid>[/login]`): Ring0's own sign-in form,
 * with its throttle, and consent granted programmatically to the first-party clients.
 */
import type http from "node:http";
import { errors, type Interaction, type Provider } from "oidc-provider";
import type { Logger } from "@/server/logger";
import { type AccountDirectory, normaliseUsername } from "./accounts";
import type { Pages } from "./pages";
import type { LoginThrottle } from "./throttle";

const MAX_FORM_BYTES = 8 * 1024;

/** `/interaction/<uid>` (the prompt) and `/interaction/<uid>/login` (the form's submission). */
export const interactionRoute = /^\/interaction\/([A-Za-z0-9_-]{1,128})(?:\/(login))?\/?$/;

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

async function readForm(req: http.IncomingMessage): Promise<URLSearchParams> {
  const type = (req.headers["content-type"] ?? "").split(";")[0]?.trim().toLowerCase();
  if (type !== "application/x-www-form-urlencoded") throw new HttpError(415, "Unsupported form encoding.");
  const declared = Number(req.headers["content-length"] ?? Number.NaN);
  if (declared > MAX_FORM_BYTES) throw new HttpError(413, "The form was too large.");
  const chunks: Buffer[] = [];
  let size = 0;
  // destroyOnReturn: false keeps the socket usable so the 413 page can still be sent.
  for await (const chunk of req.iterator({ destroyOnReturn: false })) {
    size += (chunk as Buffer).length;
    if (size > MAX_FORM_BYTES) throw new HttpError(413, "The form was too large.");
    chunks.push(chunk as Buffer);
  }
  return new URLSearchParams(Buffer.concat(chunks).toString("utf8"));
}

function field(form: URLSearchParams, name: string, max: number): string {
  const value = form.get(name) ?? "";
  return value.length > max ? value.slice(0, max) : value;
}

export interface InteractionOptions {
  provider: Provider;
  /** The issuer's origin. */
  issuer: string;
  issuerUrl: URL;
  directory: AccountDirectory;
  throttle: LoginThrottle;
  pages: Pages;
  logger: Logger;
}

/**
 * Answers one interaction request (`uid` and `action` from `interactionRoute`); never rejects:
 * failures become a page (or a destroyed socket once the response has begun).
 */
export function createInteractionHandler({
  provider,
  issuer,
  issuerUrl,
  directory,
  throttle,
  pages,
  logger,
}: InteractionOptions): (
  req: http.IncomingMessage,
  res: http.ServerResponse,
  uid: string,
  action: string,
  pathname: string,
) => void {
  /** Grants the missing consent programmatically (first-party clients never see a consent page). */
  const finishConsent = async (
    req: http.IncomingMessage,
    res: http.ServerResponse,
    interaction: Interaction,
  ) => {
    const { prompt, params, session } = interaction;
    const clientId = String(params.client_id);
    const accountId = session?.accountId;
    if (!accountId) throw new HttpError(400, "Your sign-in request is no longer valid.");
    const existing = interaction.grantId ? await provider.Grant.find(interaction.grantId) : undefined;
    const grant = existing ?? new provider.Grant({ accountId, clientId });
    const details = prompt.details as {
      missingOIDCScope?: string[];
      missingOIDCClaims?: string[];
      missingResourceScopes?: Record<string, string[]>;
    };
    if (details.missingOIDCScope) grant.addOIDCScope(details.missingOIDCScope.join(" "));
    if (details.missingOIDCClaims) grant.addOIDCClaims(details.missingOIDCClaims);
    for (const [indicator, scopes] of Object.entries(details.missingResourceScopes ?? {})) {
      grant.addResourceScope(indicator, scopes.join(" "));
    }
    const grantId = await grant.save();
    await provider.interactionFinished(req, res, { consent: { grantId } }, { mergeWithLastSubmission: true });
  };

  const loadInteraction = async (req: http.IncomingMessage, res: http.ServerResponse, uid: string) => {
    const interaction = await provider.interactionDetails(req, res);
    if (interaction.uid !== uid) throw new errors.SessionNotFound("interaction uid mismatch");
    return interaction;
  };

  const handleInteraction = async (
    req: http.IncomingMessage,
    res: http.ServerResponse,
    uid: string,
    action: string,
  ) => {
    if (action === "") {
      if (req.method !== "GET" && req.method !== "HEAD") throw new HttpError(405, "Method not allowed.");
      const interaction = await loadInteraction(req, res, uid);
      if (interaction.prompt.name === "consent") return finishConsent(req, res, interaction);
      if (interaction.prompt.name !== "login")
        throw new HttpError(400, "This sign-in step is not supported.");
      const hint = typeof interaction.params.login_hint === "string" ? interaction.params.login_hint : "";
      return pages.login(res, 200, uid, hint.slice(0, 128));
    }

    if (req.method !== "POST") throw new HttpError(405, "Method not allowed.");
    const origin = req.headers.origin;
    if (
      origin &&
      origin !== "null" &&
      origin !== issuer &&
      origin !== `${issuerUrl.protocol}//${req.headers.host}`
    ) {
      throw new HttpError(403, "This sign-in form was submitted from another site.");
    }
    const form = await readForm(req);
    const interaction = await loadInteraction(req, res, uid);
    if (interaction.prompt.name !== "login") throw new HttpError(400, "This sign-in step is not supported.");

    const username = normaliseUsername(field(form, "username", 128));
    const password = field(form, "password", 1024);
    const client = String(interaction.params.client_id ?? "");

    const wait = throttle.retryAfter(username);
    if (wait > 0) {
      logger.warn("iam sign-in throttled", { username, client, retryAfterSeconds: wait });
      return pages.login(
        res,
        429,
        uid,
        username,
        "Too many failed sign-in attempts. Wait a few minutes and try again.",
        {
          "Retry-After": String(wait),
        },
      );
    }

    const result =
      username && password
        ? await directory.authenticate(username, password)
        : ({ ok: false, reason: "invalid" } as const);
    if (!result.ok) {
      if (username) throttle.failed(username);
      logger.warn("iam sign-in failed", { username, client, reason: result.reason });
      if (result.reason === "disabled") {
        return pages.login(
          res,
          403,
          uid,
          username,
          "This account is disabled. Ask an admin of your tenant to enable it again.",
        );
      }
      if (result.reason === "ambiguous") {
        return pages.login(
          res,
          401,
          uid,
          username,
          "This username exists in more than one tenant: sign in as <tenant>:<username>, e.g. acme:" +
            username.split(":").pop(),
        );
      }
      return pages.login(res, 401, uid, username, "Invalid username or password.");
    }
    const { account } = result;

    throttle.succeeded(username);
    logger.info("iam sign-in succeeded", {
      username: account.username,
      tenant: account.tenant,
      sub: account.sub,
      client,
    });
    await provider.interactionFinished(
      req,
      res,
      { login: { accountId: account.sub, amr: ["pwd"], remember: true } },
      { mergeWithLastSubmission: false },
    );
  };

  return (req, res, uid, action, pathname) => {
    handleInteraction(req, res, uid, action).catch((error: unknown) => {
      if (res.headersSent) {
        logger.error("iam interaction failed after responding", { error });
        res.destroy();
        return;
      }
      if (error instanceof errors.SessionNotFound) {
        pages.message(res, 400, "This sign-in request expired or was already used.");
      } else if (error instanceof HttpError) {
        pages.message(res, error.status, error.message);
      } else {
        logger.error("iam interaction failed", { error, path: pathname });
        pages.message(res, 500, "Something went wrong. Try again.");
      }
    });
  };
}
