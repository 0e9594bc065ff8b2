/**
 * The embedded IAM's own pages (sign-in, sign-out, errors): server-rendered, no external assets,
 * strict CSP with a per-response nonce.
 */
import { randomBytes } from "node:crypto";
import type http from "node:http";
import type { KoaContextWithOIDC } from "oidc-provider";

function escapeHtml(value: string): string {
  return value.replace(
    /[&<>"']/g,
    (char) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[char] ?? char,
  );
}

const stylesheet = `
:root{color-scheme:light dark;--bg:#f4f5f7;--card:#fff;--fg:#16181d;--muted:#5b6270;--border:#d0d4dc;--accent:#2451d6;--accent-fg:#fff;--danger-bg:#fdecec;--danger-fg:#9b1c1c;--focus:#2451d6}
@media (prefers-color-scheme:dark){:root{--bg:#0f1115;--card:#181b21;--fg:#e8eaef;--muted:#a2a9b6;--border:#343a46;--accent:#7f9cff;--accent-fg:#0f1115;--danger-bg:#3a1717;--danger-fg:#ffb4b4;--focus:#7f9cff}}
*{box-sizing:border-box}
body{margin:0;min-height:100vh;display:grid;place-items:center;padding:1.5rem;background:var(--bg);color:var(--fg);font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
main{width:100%;max-width:24rem;background:var(--card);border:1px solid var(--border);border-radius:12px;padding:2rem}
h1{font-size:1.4rem;margin:0 0 1.25rem}
p{margin:0 0 1rem;color:var(--muted)}
.field{display:grid;gap:.35rem;margin-bottom:1rem}
label{font-weight:600;font-size:.95rem}
input{font:inherit;padding:.6rem .7rem;border:1px solid var(--border);border-radius:8px;background:transparent;color:inherit;width:100%}
input:focus-visible,button:focus-visible{outline:3px solid var(--focus);outline-offset:2px}
button{font:inherit;font-weight:600;width:100%;padding:.65rem;border:0;border-radius:8px;background:var(--accent);color:var(--accent-fg);cursor:pointer}
button.secondary{background:transparent;color:var(--fg);border:1px solid var(--border);margin-top:.6rem}
.alert{background:var(--danger-bg);color:var(--danger-fg);border-radius:8px;padding:.6rem .8rem;margin-bottom:1rem}
`;
export interface PageOptions {
  title: string;
  body: string;
  nonce: string;
  script?: string;
}

function renderPage({ title, body, nonce, script }: PageOptions): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<meta name="robots" content="noindex, nofollow">
<title>${escapeHtml(title)}</title>
<style nonce="${nonce}">${stylesheet}</style>
</head>
<body>
<main>
${body}
</main>${script ? `\n<script nonce="${nonce}">${script}</script>` : ""}
</body>
</html>
`;
}

function securityHeaders(nonce: string, formOrigins: string, withScript: boolean): Record<string, string> {
  const csp = [
    "default-src 'none'",
    `style-src 'nonce-${nonce}'`,
    withScript ? `script-src 'nonce-${nonce}'` : "script-src 'none'",
    // Chrome applies form-action to the redirects that follow a submission, so the RPs' origins
    // must be allowed too (login → /auth → redirect_uri, logout → post_logout_redirect_uri).
    `form-action 'self'${formOrigins}`,
    "frame-ancestors 'none'",
    "base-uri 'none'",
  ].join("; ");
  return {
    "Content-Security-Policy": csp,
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cache-Control": "no-store",
    Pragma: "no-cache",
  };
}

const newNonce = () => randomBytes(16).toString("base64url");

function loginBody(uid: string, username: string, alert: string | undefined): string {
  const alertHtml = alert ? `<div class="alert" role="alert">${escapeHtml(alert)}</div>\n` : "";
  const invalid = alert ? ' aria-invalid="true" aria-describedby="login-error"' : "";
  return `<h1>Sign in to Ring0</h1>
${alertHtml.replace('role="alert"', 'role="alert" id="login-error"')}<form method="post" action="/interaction/${encodeURIComponent(uid)}/login">
<div class="field"><label for="username">Username</label><input id="username" name="username" type="text" autocomplete="username" autocapitalize="none" autocorrect="off" spellcheck="false" maxlength="128" required value="${escapeHtml(username)}"${username ? "" : " autofocus"}${invalid}></div>
<div class="field"><label for="password">Password</label><input id="password" name="password" type="password" autocomplete="current-password" maxlength="1024" required${username ? " autofocus" : ""}${invalid}></div>
<button type="submit">Sign in</button>
</form>`;
}

/** One page per sign-out step of oidc-provider's RP-initiated logout. */
export const logoutPages = {
  /** The RP sent a valid id_token_hint: submit oidc-provider's logout form at once. */
  signingOut(form: string): PageOptions {
    const autoForm = form.replace("</form>", '<input type="hidden" name="logout" value="yes"/></form>');
    return {
      title: "Signing out of Ring0",
      nonce: newNonce(),
      body: `<h1>Signing out of Ring0…</h1>
${autoForm}
<noscript><p>JavaScript is off; finish signing out with the button below.</p></noscript>
<button type="submit" form="op.logoutForm">Continue signing out</button>`,
      script: `document.getElementById("op.logoutForm").submit();`,
    };
  },
  confirm(form: string): PageOptions {
    return {
      title: "Sign out of Ring0",
      nonce: newNonce(),
      body: `<h1>Sign out of Ring0?</h1>
${form}
<button type="submit" form="op.logoutForm" name="logout" value="yes" autofocus>Sign out</button>
<button type="submit" form="op.logoutForm" class="secondary">Stay signed in</button>`,
    };
  },
  signedOut(): PageOptions {
    return {
      title: "Signed out",
      nonce: newNonce(),
      body: "<h1>You are signed out</h1>\n<p>You can close this window or return to Ring0.</p>",
    };
  },
};

/** oidc-provider's error page (`renderError`). */
export function errorPage(out: { error: string; error_description?: unknown }): PageOptions {
  const description = typeof out.error_description === "string" ? out.error_description : "";
  return {
    title: "Sign-in problem",
    nonce: newNonce(),
    body: `<h1>Something went wrong</h1>
<div class="alert" role="alert">${escapeHtml(out.error)}${description ? `: ${escapeHtml(description)}` : ""}</div>
<p>Return to Ring0 and try again.</p>`,
  };
}

export interface Pages {
  /** Answers an oidc-provider request (a Koa context) with `page`. */
  toContext(ctx: KoaContextWithOIDC, page: PageOptions): void;
  send(res: http.ServerResponse, status: number, page: PageOptions, extra?: Record<string, string>): void;
  /** A sign-in page holding only `message` (the interaction cannot go on). */
  message(res: http.ServerResponse, status: number, message: string): void;
  login(
    res: http.ServerResponse,
    status: number,
    uid: string,
    username: string,
    alert?: string,
    extra?: Record<string, string>,
  ): void;
}

/**
 * Sends pages with their security headers; `formOrigins` (" https://a https://b") are the RPs'
 * origins the forms' redirects may reach.
 */
export function createPages(formOrigins: string): Pages {
  const send: Pages["send"] = (res, status, page, extra = {}) => {
    const body = renderPage(page);
    res.writeHead(status, {
      ...securityHeaders(page.nonce, formOrigins, Boolean(page.script)),
      "Content-Type": "text/html; charset=utf-8",
      "Content-Length": Buffer.byteLength(body),
      ...extra,
    });
    res.end(body);
  };
  return {
    toContext(ctx, page) {
      for (const [name, value] of Object.entries(
        securityHeaders(page.nonce, formOrigins, Boolean(page.script)),
      )) {
        ctx.set(name, value);
      }
      ctx.type = "html";
      ctx.body = renderPage(page);
    },
    send,
    message: (res, status, message) =>
      send(res, status, {
        title: "Sign in to Ring0",
        nonce: newNonce(),
        body: `<h1>Sign in to Ring0</h1>\n<div class="alert" role="alert">${escapeHtml(message)}</div>\n<p>Return to Ring0 and start signing in again.</p>`,
      }),
    login: (res, status, uid, username, alert, extra) =>
      send(
        res,
        status,
        { title: "Sign in to Ring0", nonce: newNonce(), body: loginBody(uid, username, alert) },
        extra,
      ),
  };
}
