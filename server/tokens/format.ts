/**
 * Ring0 API tokens: `r0_` followed by 32 random bytes written in base62 (43 characters). Only the
 * SHA-256 of a token is stored; a short prefix identifies it in lists.
 */
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";

export const tokenMarker = "r0_";
const alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const entropyBytes = 32;
/** 62^43 > 2^256 > 62^42: every 32-byte value fits in exactly 43 base62 digits. */
const secretLength = 43;
/** The marker and 9 secret characters (~53 bits): enough to tell a person's tokens apart. */
const prefixLength = tokenMarker.length + 9;
const tokenPattern = new RegExp(`^${tokenMarker}[0-9A-Za-z]{${secretLength}}$`);

/** Big-endian bytes → fixed-width base62. */
export function encodeBase62(bytes: Uint8Array, width: number): string {
  let value = 0n;
  for (const byte of bytes) value = (value << 8n) | BigInt(byte);
  let digits = "";
  while (value > 0n) {
    digits = alphabet[Number(value % 62n)] + digits;
    value /= 62n;
  }
  if (digits.length > width)
    throw new RangeError(`value needs ${digits.length} base62 digits, more than ${width}`);
  return digits.padStart(width, alphabet[0]);
}

/** A new token from `entropyBytes` random bytes (the source is injectable for tests). */
export function generateToken(random: (size: number) => Uint8Array = randomBytes): string {
  return tokenMarker + encodeBase62(random(entropyBytes), secretLength);
}

/** True for anything shaped like a Ring0 token; says nothing about whether it was issued. */
export function isWellFormedToken(candidate: string): boolean {
  return tokenPattern.test(candidate);
}

/** SHA-256 hex: what the database stores and looks tokens up by. */
export function hashToken(token: string): string {
  return createHash("sha256").update(token, "utf8").digest("hex");
}

/** The characters shown in lists and audit events; never enough to use the token. */
export function tokenPrefix(token: string): string {
  return token.slice(0, prefixLength);
}

/** Compares two hex digests without leaking where they differ. */
export function sameHash(a: string, b: string): boolean {
  const left = Buffer.from(a, "hex");
  const right = Buffer.from(b, "hex");
  return left.length === right.length && left.length > 0 && timingSafeEqual(left, right);
}
