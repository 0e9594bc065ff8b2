/**
 * The HTTP side of kubeconfig downloads (route handlers under app/api/tenants/): Origin check,
 * form parsing, error → status mapping and the attachment response. Web-standard Request and
 * Response only, so the handlers stay thin and tests call them without Next.
 */
import type { z } from "zod";
import { originRefusal } from "@/server/auth/origin";
import { sessionUserFromCookieHeader } from "@/server/auth/session";
import type { SessionUser } from "@/server/core/roles";
import { describeZodError } from "@/server/core/zod-wording";
import { env } from "@/server/env";
import { DomainError } from "@/server/errors";
import type { KubeconfigFile } from "@/server/kubeconfigs/service";
import { logger } from "@/server/logger";

const statusForDomainError: Record<DomainError["kind"], number> = {
  "not-found": 404,
  conflict: 409,
  forbidden: 403,
  unauthenticated: 401,
  invalid: 400,
  quota: 409,
  unavailable: 503,
};

/** A plain-text answer a person reads in the browser or in curl. */
export function textResponse(status: number, message: string): Response {
  return new Response(`${message}\n`, {
    status,
    headers: { "content-type": "text/plain; charset=utf-8", "cache-control": "no-store" },
  });
}

/** A kubeconfig as a file download, never cached. */
export function kubeconfigResponse(file: KubeconfigFile): Response {
  return new Response(file.kubeconfig, {
    status: 200,
    headers: {
      "content-type": "application/yaml",
      "content-disposition": `attachment; filename="${file.filename}"`,
      "cache-control": "no-store",
      "x-content-type-options": "nosniff",
    },
  });
}

/** Cross-site forms must not mint credentials: the request must come from one of Ring0's origins. */
export function originAllowed(request: Request): boolean {
  const source = {
    origin: request.headers.get("origin"),
    referer: request.headers.get("referer"),
    bearer: false,
  };
  return originRefusal(source, env().allowedOrigins) === null;
}

export type Guarded = { user: SessionUser } | { response: Response };

/** Origin first (403), then the session cookie (401). */
export async function guardFormPost(request: Request): Promise<Guarded> {
  if (!originAllowed(request)) {
    return {
      response: textResponse(
        403,
        "Kubeconfig downloads must come from Ring0's own pages (Origin not allowed).",
      ),
    };
  }
  const user = await sessionUserFromCookieHeader(request.headers.get("cookie"));
  if (!user) return { response: textResponse(401, "Sign in to download a kubeconfig.") };
  return { user };
}

/** The form (urlencoded or multipart) or JSON body as a plain object; null when unreadable. */
export async function readFields(request: Request): Promise<Record<string, unknown> | null> {
  const type = request.headers.get("content-type") ?? "";
  try {
    if (type.includes("application/json")) {
      const body: unknown = await request.json();
      return body && typeof body === "object" && !Array.isArray(body)
        ? (body as Record<string, unknown>)
        : null;
    }
    const form = await request.formData();
    const fields: Record<string, unknown> = {};
    for (const [key, value] of form.entries())
      if (typeof value === "string" && value !== "") fields[key] = value;
    return fields;
  } catch {
    return null;
  }
}

/** Validated fields, or a 400 naming each bad field. */
export async function parseFields<Schema extends z.ZodType>(
  request: Request,
  schema: Schema,
): Promise<{ data: z.infer<Schema> } | { response: Response }> {
  const fields = await readFields(request);
  if (!fields)
    return { response: textResponse(400, "Expected a form post (application/x-www-form-urlencoded).") };
  const result = schema.safeParse(fields);
  if (!result.success)
    return { response: textResponse(400, `Invalid input — ${describeZodError(result.error)}`) };
  return { data: result.data };
}

/** Domain errors keep their message; anything else is logged and answered with a request id. */
export function errorResponse(error: unknown, requestId: string): Response {
  if (error instanceof DomainError) return textResponse(statusForDomainError[error.kind], error.message);
  logger.error("kubeconfig request failed", { requestId, error });
  return textResponse(500, `Something went wrong on the server (request ${requestId}).`);
}
