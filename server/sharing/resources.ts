/**
 * SharingPolicy objects in the super cluster as Ring0 reads and writes them: reads from the shared
 * informer, writes straight to the API server (create refuses an existing name; spec edits are
 * guarded by resourceVersion; approval and revocation are annotations), and the summary the
 * portal and the CLI show, its state computed from the clock so an expiry shows at its instant.
 */
import { ConflictError, NotFoundError } from "@/server/errors";
import { createObject, deleteObject, FIELD_MANAGER, readObject } from "@/server/k8s/apply";
import { isConflict, isNotFound } from "@/server/k8s/errors";
import { readSynced, requireSuperCluster } from "@/server/k8s/live";
import { kubeRequest } from "@/server/k8s/transport";
import { type TenantResource, tenantInformer } from "@/server/tenants/tenant-resources";
import { grantState } from "./grants";
import { sharingInformer } from "./live";
import {
  type Grantee,
  type GrantRule,
  type GrantState,
  ownerLabel,
  type SharingPolicyResource,
  type SharingSpec,
  sharingAnnotations,
  sharingApiVersion,
  sharingKind,
  sharingPath,
} from "./types";

/** A grant's short name: what its owner calls it (`<owner>.<shortName>` is the object's name). */
export const grantShortNamePattern = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
export const grantShortNameMaxLength = 40;

export function grantName(owner: string, shortName: string): string {
  return `${owner}.${shortName}`;
}

export function grantShortName(grant: SharingPolicyResource): string {
  const prefix = `${grant.spec.ownerTenant}.`;
  return grant.metadata.name.startsWith(prefix)
    ? grant.metadata.name.slice(prefix.length)
    : grant.metadata.name;
}

export interface GrantConditionSummary {
  type: string;
  status: string;
  reason: string | null;
  message: string | null;
  lastTransitionTime: string | null;
}

/** A grant as the owner's portal, the operator console and the CLI show it. */
export interface GrantSummary {
  name: string;
  shortName: string;
  owner: string;
  ownerDisplayName: string;
  grantees: Grantee[];
  rules: GrantRule[];
  expiresAt: string | null;
  purpose: string;
  state: GrantState;
  message: string;
  conditions: GrantConditionSummary[];
  lastUsedAt: string | null;
  requestedBy: string | null;
  approvedBy: string | null;
  approvedAt: string | null;
  revokedBy: string | null;
  revokedAt: string | null;
  createdAt: string | null;
  /** For an edit guarded against concurrent changes. */
  resourceVersion: string | null;
}

function isoOrNull(value: string | Date | undefined): string | null {
  if (!value) return null;
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? null : date.toISOString();
}

export function summariseGrant(
  grant: SharingPolicyResource,
  now: Date,
  ownerDisplayName = grant.spec.ownerTenant,
): GrantSummary {
  const annotations = grant.metadata.annotations ?? {};
  const decision = grantState(grant, now);
  return {
    name: grant.metadata.name,
    shortName: grantShortName(grant),
    owner: grant.spec.ownerTenant,
    ownerDisplayName,
    grantees: grant.spec.grantees ?? [],
    rules: grant.spec.rules ?? [],
    expiresAt: grant.spec.expiresAt ?? null,
    purpose: grant.spec.purpose ?? "",
    state: decision.state,
    message: decision.message,
    conditions: (grant.status?.conditions ?? []).map((condition) => ({
      type: condition.type,
      status: condition.status,
      reason: condition.reason || null,
      message: condition.message || null,
      lastTransitionTime: isoOrNull(condition.lastTransitionTime),
    })),
    lastUsedAt: isoOrNull(grant.status?.lastUsedAt),
    requestedBy: annotations[sharingAnnotations.requestedBy] ?? null,
    approvedBy: annotations[sharingAnnotations.approvedBy] ?? null,
    approvedAt: annotations[sharingAnnotations.approvedAt] ?? null,
    revokedBy: annotations[sharingAnnotations.revokedBy] ?? null,
    revokedAt: annotations[sharingAnnotations.revokedAt] ?? null,
    createdAt: isoOrNull(grant.metadata.creationTimestamp),
    resourceVersion: grant.metadata.resourceVersion ?? null,
  };
}

/** Every grant with its owner's display name, from the informers (waits for their first list). */
export async function listGrantResources(): Promise<{
  grants: SharingPolicyResource[];
  displayNames: Map<string, string>;
}> {
  const grants = sharingInformer();
  const tenants = tenantInformer(requireSuperCluster());
  return readSynced([grants, tenants], "sharing policies", () => ({
    grants: grants.snapshot(),
    displayNames: new Map(
      tenants
        .snapshot()
        .map((tenant: TenantResource) => [
          tenant.metadata.name,
          tenant.spec?.displayName || tenant.metadata.name,
        ]),
    ),
  }));
}

function grantRef(name: string) {
  return { apiVersion: sharingApiVersion, kind: sharingKind, metadata: { name } };
}

function notFound(name: string): NotFoundError {
  return new NotFoundError(`Grant "${name}" was not found.`);
}

/** One grant read from the API server (fresher than the informer); NotFoundError when there is none. */
export async function readGrantResource(name: string): Promise<SharingPolicyResource> {
  try {
    return await readObject<SharingPolicyResource>(requireSuperCluster(), grantRef(name));
  } catch (error) {
    if (isNotFound(error)) throw notFound(name);
    throw error;
  }
}

/**
 * Waits (briefly) until the informer reflects a write, so a list right after a change shows it:
 * `seen` says whether a snapshot does. Gives up quietly; the informer catches up on its own.
 */
async function informerCaughtUp(
  seen: (grants: SharingPolicyResource[]) => boolean,
  timeoutMs = 3_000,
): Promise<void> {
  const informer = sharingInformer();
  if (seen(informer.snapshot())) return;
  await new Promise<void>((resolve) => {
    const timer = setTimeout(done, timeoutMs);
    const release = informer.subscribe((items) => {
      if (seen(items)) done();
    });
    function done() {
      clearTimeout(timer);
      release();
      resolve();
    }
  });
}

const reflects = (stored: SharingPolicyResource) => (grants: SharingPolicyResource[]) =>
  grants.some(
    (grant) =>
      grant.metadata.name === stored.metadata.name &&
      grant.metadata.resourceVersion === stored.metadata.resourceVersion,
  );

/** Creates a grant named `<owner>.<shortName>`; an existing name is a ConflictError. */
export async function createGrantResource(
  shortName: string,
  spec: SharingSpec,
  annotations: Record<string, string>,
): Promise<SharingPolicyResource> {
  const name = grantName(spec.ownerTenant, shortName);
  try {
    const created = await createObject<SharingPolicyResource>(requireSuperCluster(), {
      ...grantRef(name),
      metadata: {
        name,
        labels: { [ownerLabel]: spec.ownerTenant, "app.kubernetes.io/managed-by": "ring0" },
        annotations,
      },
      spec,
    });
    await informerCaughtUp(reflects(created));
    return created;
  } catch (error) {
    if (isConflict(error)) {
      throw new ConflictError(
        `Tenant "${spec.ownerTenant}" already has a grant named "${shortName}"; choose another name.`,
      );
    }
    throw error;
  }
}

/**
 * A JSON merge patch of a grant, applied only if it is still at `resourceVersion`: a grant changed
 * meanwhile is a ConflictError rather than silently overwritten. Annotations set to null are removed.
 */
async function patchGrant(
  name: string,
  resourceVersion: string | undefined,
  patch: { spec?: SharingSpec; annotations?: Record<string, string | null> },
): Promise<SharingPolicyResource> {
  const body: Record<string, unknown> = {
    metadata: {
      ...(resourceVersion ? { resourceVersion } : {}),
      ...(patch.annotations ? { annotations: patch.annotations } : {}),
    },
  };
  // Arrays are replaced whole by a merge patch; a dropped expiry must be removed by name.
  if (patch.spec) body.spec = { ...patch.spec, expiresAt: patch.spec.expiresAt ?? null };
  try {
    const patched = await kubeRequest<SharingPolicyResource>(requireSuperCluster(), {
      method: "PATCH",
      path: `${sharingPath}/${encodeURIComponent(name)}`,
      query: { fieldManager: FIELD_MANAGER },
      contentType: "application/merge-patch+json",
      body,
      timeoutMs: 15_000,
    });
    await informerCaughtUp(reflects(patched));
    return patched;
  } catch (error) {
    if (isNotFound(error)) throw notFound(name);
    if (isConflict(error)) {
      throw new ConflictError(`Grant "${name}" changed while it was being saved; read it again and retry.`);
    }
    throw error;
  }
}

/** Replaces a grant's spec (and sets annotations) if it is still at `current`'s resourceVersion. */
export function updateGrantSpec(
  current: SharingPolicyResource,
  spec: SharingSpec,
  annotations: Record<string, string | null>,
): Promise<SharingPolicyResource> {
  return patchGrant(current.metadata.name, current.metadata.resourceVersion, { spec, annotations });
}

/** Sets (or, with null, removes) annotations; guarded by `current`'s resourceVersion. */
export function setGrantAnnotations(
  current: SharingPolicyResource,
  annotations: Record<string, string | null>,
): Promise<SharingPolicyResource> {
  return patchGrant(current.metadata.name, current.metadata.resourceVersion, { annotations });
}

/** Deletes a grant; resolves whether this call deleted it (false: it was already gone). */
export async function deleteGrantResource(name: string): Promise<boolean> {
  const deleted = await deleteObject(requireSuperCluster(), grantRef(name));
  await informerCaughtUp((grants) =>
    grants.every((grant) => grant.metadata.name !== name || Boolean(grant.metadata.deletionTimestamp)),
  );
  return deleted;
}
