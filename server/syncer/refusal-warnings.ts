/**
 * A Warning event on a tenant object the syncer refuses to copy (too big, malformed, refused by the
 * super cluster, or in the way of another tenant's object), once per version of it.
 */
import { recordEvent } from "@/server/k8s/events";
import { type Obj, type SyncContext, syncerComponent, type TenantSession } from "./session";
import { kindInfo, type SyncedKind } from "./synced-kinds";

export type WarnOnce = (
  session: TenantSession,
  kind: SyncedKind,
  object: Obj,
  reason: string,
  message: string,
) => Promise<void>;

export function createRefusalWarnings(ctx: SyncContext): WarnOnce {
  const { log } = ctx;
  /** Warnings already recorded (tenant|kind|ns|name|resourceVersion), so a refused object warns once. */
  const warned = new Set<string>();

  /** A Warning event on the tenant's object, once per version of it. */
  async function warnOnce(
    session: TenantSession,
    kind: SyncedKind,
    object: Obj,
    reason: string,
    message: string,
  ) {
    const id = [
      session.tenant,
      kind,
      object.metadata.namespace,
      object.metadata.name,
      object.metadata.resourceVersion,
    ].join("|");
    if (warned.has(id)) return;
    warned.add(id);
    if (warned.size > 10_000) warned.clear();
    log.warn("tenant object refused", {
      tenant: session.tenant,
      kind,
      name: object.metadata.name,
      reason,
      message,
    });
    await recordEvent(
      session.conn,
      {
        apiVersion: kindInfo[kind].apiVersion,
        kind: kindInfo[kind].kind,
        name: object.metadata.name,
        ...(object.metadata.namespace ? { namespace: object.metadata.namespace } : {}),
        ...(object.metadata.uid ? { uid: object.metadata.uid } : {}),
      },
      { type: "Warning", reason, message },
      { component: syncerComponent, logger: log },
    );
  }

  return warnOnce;
}
