/**
 * Typed domain errors. Domain code throws these; one tRPC middleware (and the HTTP/WS layers)
 * maps them to protocol codes with a message a person can act on.
 */
export abstract class DomainError extends Error {
  abstract readonly kind:
    | "not-found"
    | "conflict"
    | "forbidden"
    | "unauthenticated"
    | "invalid"
    | "quota"
    | "unavailable";
}

export class NotFoundError extends DomainError {
  readonly kind = "not-found";
  override name = "NotFoundError";
}

export class ConflictError extends DomainError {
  readonly kind = "conflict";
  override name = "ConflictError";
}

export class ForbiddenError extends DomainError {
  readonly kind = "forbidden";
  override name = "ForbiddenError";
}

export class UnauthenticatedError extends DomainError {
  readonly kind = "unauthenticated";
  override name = "UnauthenticatedError";
}

export class InvalidInputError extends DomainError {
  readonly kind = "invalid";
  override name = "InvalidInputError";
}

export class QuotaExceededError extends DomainError {
  readonly kind = "quota";
  override name = "QuotaExceededError";
}

/** A dependency (the super cluster, a tenant control plane) cannot be reached right now. */
export class UnavailableError extends DomainError {
  readonly kind = "unavailable";
  override name = "UnavailableError";
}
