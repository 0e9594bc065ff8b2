/**
 * Database types and enums, safe to import anywhere (including client components): this pulls in only
 * the generated browser entry point, not the Prisma client or the pg driver.
 */
export type { AuditEvent, Membership, User } from "@/server/generated/prisma/browser";
export { AuditResult, Prisma, Role } from "@/server/generated/prisma/browser";
