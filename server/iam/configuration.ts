/**
 * The oidc-provider configuration of the embedded IAM: the first-party clients, the claims Ring0
 * reads from the ID token (tenant, roles), implicit consent, its cookies, sign-out without a
 * confirmation page when the RP proves who is signed in, and the lifetimes of its artifacts.
 */
import {
  type Account,
  type Adapter,
  type Configuration,
  interactionPolicy,
  type JWKS,
  type KoaContextWithOIDC,
} from "oidc-provider";
import type { AccountDirectory } from "./accounts";
import { errorPage, logoutPages, type Pages } from "./pages";

export const IAM_SCOPES = ["openid", "profile", "email", "ring0"] as const;

const SECONDS = { minute: 60, hour: 60 * 60 } as const;

export interface EmbeddedIamClient {
  clientId: string;
  clientSecret: string;
  redirectUris: string[];
  postLogoutRedirectUris: string[];
}

/**
 * The default prompts, plus: an IAM session whose account can no longer be found (a database
 * account that was disabled) asks for a login again instead of failing the authorization.
 */
function loginPolicy() {
  const policy = interactionPolicy.base();
  const { Check } = interactionPolicy;
  policy
    .get("login")
    ?.checks.add(
      new Check("account_unavailable", "The signed-in account is no longer available", (ctx) =>
        ctx.oidc.session?.accountId && !ctx.oidc.account ? Check.REQUEST_PROMPT : Check.NO_NEED_TO_PROMPT,
      ),
      0,
    );
  return policy;
}

export interface ProviderConfigurationOptions {
  clients: EmbeddedIamClient[];
  directory: AccountDirectory;
  adapter: (model: string) => Adapter;
  clockTolerance: number;
  jwks: JWKS;
  cookieKeys: string[];
  pages: Pages;
}

export function providerConfiguration({
  clients,
  directory,
  adapter,
  clockTolerance,
  jwks,
  cookieKeys,
  pages,
}: ProviderConfigurationOptions): Configuration {
  // Disabled database accounts are not found, so their IAM sessions stop yielding tokens too.
  const findAccount = async (_ctx: KoaContextWithOIDC, sub: string): Promise<Account | undefined> => {
    const account = await directory.findBySub(sub);
    if (!account) return undefined;
    return {
      accountId: account.sub,
      claims: () => ({
        sub: account.sub,
        name: account.name,
        preferred_username: account.username,
        email: account.email,
        tenant: account.tenant,
        roles: [...account.roles],
      }),
    };
  };

  return {
    adapter,
    clockTolerance,
    clients: clients.map((client) => ({
      client_id: client.clientId,
      client_secret: client.clientSecret,
      redirect_uris: client.redirectUris,
      post_logout_redirect_uris: client.postLogoutRedirectUris,
      grant_types: ["authorization_code"],
      response_types: ["code"],
      token_endpoint_auth_method: "client_secret_basic",
      id_token_signed_response_alg: "RS256",
    })),
    // client_secret_basic and client_secret_post are interchangeable for a registered secret client.
    clientAuthMethods: ["client_secret_basic", "client_secret_post"],
    responseTypes: ["code"],
    scopes: [...IAM_SCOPES],
    claims: {
      acr: null,
      auth_time: null,
      iss: null,
      sid: null,
      openid: ["sub"],
      profile: ["name", "preferred_username"],
      email: ["email"],
      ring0: ["tenant", "roles"],
    },
    // The RP reads tenant and roles straight from the ID token.
    conformIdTokenClaims: false,
    pkce: { required: () => true },
    findAccount,
    // Consent is implicit for our first-party clients: grant whatever OIDC scopes/claims they ask for.
    async loadExistingGrant(ctx) {
      const { oidc } = ctx;
      const client = oidc.client;
      const accountId = oidc.session?.accountId;
      if (!client || !accountId) return undefined;
      const grantId = oidc.result?.consent?.grantId ?? oidc.session?.grantIdFor(client.clientId);
      let grant = grantId ? await oidc.provider.Grant.find(grantId) : undefined;
      if (grant && (grant.accountId !== accountId || grant.clientId !== client.clientId)) grant = undefined;
      grant ??= new oidc.provider.Grant({ accountId, clientId: client.clientId });
      grant.addOIDCScope(oidc.requestParamOIDCScopes);
      if (oidc.requestParamClaims.size) grant.addOIDCClaims(oidc.requestParamClaims);
      await grant.save();
      return grant;
    },
    jwks,
    cookies: {
      keys: cookieKeys,
      // Cookies ignore ports: distinct names keep ours apart from Ring0's and other localhost apps'.
      names: {
        session: "ring0_iam_session",
        interaction: "ring0_iam_interaction",
        resume: "ring0_iam_resume",
      },
      long: { httpOnly: true, sameSite: "lax" },
      short: { httpOnly: true, sameSite: "lax" },
    },
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}`, policy: loginPolicy() },
    features: {
      devInteractions: { enabled: false },
      resourceIndicators: { enabled: false },
      userinfo: { enabled: true },
      revocation: { enabled: true },
      rpInitiatedLogout: {
        enabled: true,
        async logoutSource(ctx, form) {
          const hint = ctx.oidc.entities.IdTokenHint;
          const accountId = ctx.oidc.session?.accountId;
          // end_session has already verified the hint's signature, audience and the post-logout URI.
          const confirmed = hint !== undefined && accountId !== undefined && hint.payload.sub === accountId;
          pages.toContext(ctx, confirmed ? logoutPages.signingOut(form) : logoutPages.confirm(form));
        },
        async postLogoutSuccessSource(ctx) {
          pages.toContext(ctx, logoutPages.signedOut());
        },
      },
    },
    async renderError(ctx, out) {
      pages.toContext(ctx, errorPage(out));
    },
    clientBasedCORS: () => false,
    ttl: {
      AccessToken: SECONDS.hour,
      AuthorizationCode: SECONDS.minute,
      IdToken: SECONDS.hour,
      Interaction: 30 * SECONDS.minute,
      Session: 12 * SECONDS.hour,
      Grant: 12 * SECONDS.hour,
      RefreshToken: 12 * SECONDS.hour,
    },
  };
}
