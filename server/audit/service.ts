import { type AuditEventInput, createAuditRepository } from "@/server/audit/repository";
import { getDb } from "@/server/db/client";
import { logger } from "@/server/logger";

/**
 * Records an audit event. Auditing must not take the action down with it, but a lost event is
 * itself worth an error line, so failures are logged loudly rather than thrown.
 */
export async function recordAudit(event: AuditEventInput): Promise<void> {
  try {
    await createAuditRepository(getDb()).record(event);
  } catch (error) {
    logger.error("audit event could not be recorded", { action: event.action, error });
  }
}
