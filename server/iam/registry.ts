/**
 * Whether this process runs the embedded IAM, and its seed accounts (never passwords). The runtime
 * exports the embedded issuer as OIDC_ISSUER like an external one, so Ring0's account screens ask
 * here instead. Kept on `globalThis` because the custom server and Next's route handlers are
 * separate module graphs in one process.
 */
import { processSlot } from "@/server/core/process-slots";
import type { TenantAccount } from "./accounts";

export interface EmbeddedIamRegistration {
  issuer: string;
  seedAccounts: readonly TenantAccount[];
}

const slot = processSlot<EmbeddedIamRegistration | null>("embedded-iam");

/** Called by startEmbeddedIam (and by tests); null when it stops. */
export function registerEmbeddedIam(registration: EmbeddedIamRegistration | null): void {
  slot.set(registration);
}

/**
 * The embedded IAM when it is Ring0's identity provider; undefined with an external IAM, where
 * accounts are managed in that IAM and Ring0 only sees who signed in.
 */
export function embeddedIam(
  oidcIssuer: string | undefined = process.env.OIDC_ISSUER,
): EmbeddedIamRegistration | undefined {
  const registration = slot.get() ?? undefined;
  if (!registration) return undefined;
  if (oidcIssuer && oidcIssuer.replace(/\/$/, "") !== registration.issuer) return undefined;
  return registration;
}
