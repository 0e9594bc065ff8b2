/**
 * What owners review: who used a grant, when, for what. Each use by a grantee is an audit event
 * `share.used` under the owner's tenant, at most one per (user, grant, verb, resource, namespace)
 * a minute, carrying how many uses it stands for; and the grant's status.lastUsedAt, written at
 * most once a minute per grant. Neither write is ever awaited by the request it describes.
 */
import type { AuditEventInput } from "@/server/audit/repository";
import { recordAudit } from "@/server/audit/service";
import { processSlot } from "@/server/core/process-slots";
import type { SessionUser } from "@/server/core/roles";
import { requireSuperCluster } from "@/server/k8s/live";
import { kubeRequest } from "@/server/k8s/transport";
import { type Logger, logger } from "@/server/logger";
import { sharingPath } from "./types";

export interface GrantUse {
  user: Pick<SessionUser, "id" | "name" | "tenant">;
  owner: string;
  grant: string;
  verb: string;
  /** `pods`, `pods/log`… */
  resource: string;
  namespace: string;
  name?: string;
  via: "kubectl" | "portal" | "logs" | "exec";
}

export interface GrantUsageOptions {
  audit(event: AuditEventInput): Promise<void>;
  /** Patches the grant's status.lastUsedAt. */
  markUsed(grant: string, at: Date): Promise<void>;
  logger: Logger;
  windowMs?: number;
  now?: () => number;
}

export function createGrantUsageRecorder(options: GrantUsageOptions) {
  const windowMs = options.windowMs ?? 60_000;
  const now = options.now ?? Date.now;
  /** Key → when its window started and the uses since the event that opened it. */
  const windows = new Map<string, { started: number; suppressed: number }>();
  const marked = new Map<string, number>();

  function prune(at: number) {
    if (windows.size < 10_000) return;
    for (const [key, window] of windows) if (at - window.started >= windowMs) windows.delete(key);
  }

  return {
    record(use: GrantUse): void {
      const at = now();
      prune(at);
      const key = [use.user.tenant, use.user.id, use.grant, use.verb, use.resource, use.namespace].join(
        "\u0000",
      );
      const window = windows.get(key);
      if (window && at - window.started < windowMs) {
        window.suppressed += 1;
      } else {
        windows.set(key, { started: at, suppressed: 0 });
        options
          .audit({
            actorId: use.user.id,
            actorName: use.user.name,
            actorTenant: use.user.tenant,
            tenant: use.owner,
            action: "share.used",
            targetKind: "sharing-policy",
            target: use.grant,
            result: "success",
            detail: {
              grant: use.grant,
              verb: use.verb,
              resource: use.resource,
              namespace: use.namespace,
              ...(use.name ? { name: use.name } : {}),
              via: use.via,
              // Uses of the same key in the window before this one that had no event of their own.
              count: 1 + (window?.suppressed ?? 0),
            },
          })
          .catch((error: unknown) => options.logger.warn("grant use audit failed", { error }));
      }
      const last = marked.get(use.grant);
      if (last === undefined || at - last >= windowMs) {
        marked.set(use.grant, at);
        options
          .markUsed(use.grant, new Date(at))
          .catch((error: unknown) =>
            options.logger.warn("grant lastUsedAt not written", { grant: use.grant, error }),
          );
      }
    },
  };
}

export type GrantUsageRecorder = ReturnType<typeof createGrantUsageRecorder>;

const slot = processSlot<GrantUsageRecorder>("sharing.usage");

/** The process's recorder (a process slot: the gateway, streams and route handlers share windows). */
export function grantUsage(): GrantUsageRecorder {
  return slot.ensure(() =>
    createGrantUsageRecorder({
      audit: recordAudit,
      markUsed: async (grant, at) => {
        await kubeRequest(requireSuperCluster(), {
          method: "PATCH",
          path: `${sharingPath}/${encodeURIComponent(grant)}/status`,
          contentType: "application/merge-patch+json",
          body: { status: { lastUsedAt: at.toISOString() } },
          timeoutMs: 15_000,
        });
      },
      logger,
    }),
  );
}
