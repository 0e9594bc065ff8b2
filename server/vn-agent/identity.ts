/**
 * Who calls a vn-agent: a tenant apiserver, known only by the client certificate it presented
 * (already verified against the vn-agent client CA by the TLS layer). Nothing in the request itself
 * (headers, path, query) can name or change the tenant.
 */

/** The Organization every tenant apiserver's kubelet client certificate carries. */
export const TENANT_APISERVER_ORGANIZATION = "ring0:tenant-apiserver";

const TENANT_NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** The parts of a peer certificate's subject Node reports (a field repeated in the DN is an array). */
export interface CertificateSubject {
  CN?: string | string[];
  O?: string | string[];
}

export type TenantIdentity = { tenant: string } | { refused: string };

/**
 * The tenant of a verified client certificate: exactly one O, `ring0:tenant-apiserver`, and exactly
 * one CN, a tenant name. Anything else (another component's certificate from the same CA, a DN with
 * two CNs) is refused rather than guessed at.
 */
export function tenantFromCertificate(subject: CertificateSubject | undefined): TenantIdentity {
  if (!subject) return { refused: "no client certificate" };
  const { CN, O } = subject;
  if (typeof O !== "string" || O !== TENANT_APISERVER_ORGANIZATION) {
    return {
      refused: `the client certificate is not a tenant apiserver's (O must be ${TENANT_APISERVER_ORGANIZATION})`,
    };
  }
  if (typeof CN !== "string" || CN.length > 63 || !TENANT_NAME.test(CN)) {
    return { refused: "the client certificate's CN is not a tenant name" };
  }
  return { tenant: CN };
}
