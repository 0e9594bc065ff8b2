/**
 * The sharing service: what owners, operators and the CLI do with grants. Every write is checked
 * against the operator policy first (a refusal names the rule broken), and approval follows the
 * policy: without requireApproval Ring0 approves in the same write, so a grant works at once; with
 * it, a new or edited grant waits for an operator.
 */
import { isOperator, type SessionUser } from "@/server/core/roles";
import { env } from "@/server/env";
import { ConflictError, InvalidInputError, NotFoundError } from "@/server/errors";
import { specHash } from "./grants";
import {
  checkGrant,
  floorApiGroups,
  type GrantViolation,
  type SharingPolicyConfig,
  violationsMessage,
} from "./policy";
import {
  createGrantResource,
  deleteGrantResource,
  type GrantSummary,
  grantName,
  listGrantResources,
  readGrantResource,
  setGrantAnnotations,
  summariseGrant,
  updateGrantSpec,
} from "./resources";
import { sharingPolicy } from "./settings";
import {
  type Grantee,
  type GrantRule,
  type GrantState,
  type SharingPolicyResource,
  type SharingSpec,
  sharingAnnotations,
} from "./types";

/** Who acts: a Ring0 user's name, written into the grant's annotations. */
export interface SharingActor {
  name: string;
}

/** What an owner says about a grant (the owner itself comes from the tenant acted on). */
export interface GrantInput {
  grantees: Grantee[];
  rules: GrantRule[];
  expiresAt?: string | undefined;
  purpose: string;
}

export interface SharingServiceOptions {
  /** The operator policy in force (default: RING0_SHARING_POLICY). */
  policy?: SharingPolicyConfig;
  now?: () => Date;
  /** The operators' tenant: never a grantee (operators reach every tenant anyway). */
  operatorTenant?: string;
}

/** Who approved a grant that needed no approval (the controller's words, so both approvals read alike). */
export const automaticApprover = "Ring0 (no approval required)";

/** A spec as stored: lists without empty optional parts, the expiry in UTC. */
export function grantSpec(owner: string, input: GrantInput): SharingSpec {
  return {
    ownerTenant: owner,
    grantees: input.grantees.map((grantee) => ({
      tenant: grantee.tenant,
      ...(grantee.users?.length ? { users: [...new Set(grantee.users)] } : {}),
      ...(grantee.groups?.length ? { groups: [...new Set(grantee.groups)] } : {}),
    })),
    rules: input.rules.map((rule) => ({
      namespaces: [...new Set(rule.namespaces)],
      apiGroups: [...new Set(rule.apiGroups)],
      resources: [...new Set(rule.resources)],
      ...(rule.resourceNames?.length ? { resourceNames: [...new Set(rule.resourceNames)] } : {}),
      verbs: [...new Set(rule.verbs)],
    })),
    ...(input.expiresAt ? { expiresAt: new Date(input.expiresAt).toISOString() } : {}),
    purpose: input.purpose.trim(),
  };
}

/** The parts of a spec an edit changed, each as {from, to}: what the audit log records. */
export function specChanges(
  before: SharingSpec,
  after: SharingSpec,
): Partial<Record<keyof SharingSpec, { from: unknown; to: unknown }>> {
  const changes: Partial<Record<keyof SharingSpec, { from: unknown; to: unknown }>> = {};
  for (const key of ["grantees", "rules", "expiresAt", "purpose"] as const) {
    if (JSON.stringify(before[key] ?? null) !== JSON.stringify(after[key] ?? null)) {
      changes[key] = { from: before[key] ?? null, to: after[key] ?? null };
    }
  }
  return changes;
}

const sectionOrder = ["ownerTenant", "grantees", "rules", "expiresAt", "purpose"];
const section = (violation: GrantViolation) => {
  const index = sectionOrder.indexOf(violation.path.split(/[.[]/)[0] ?? "");
  return index === -1 ? sectionOrder.length : index;
};

/**
 * The policy's verdict, each grantee that cannot receive told the same way whether it is the
 * operators' tenant or outside the policy's grantees. Whether a grantee tenant exists is not
 * checked: a well-formed name the policy allows is accepted either way (the grant matches nobody
 * until such a tenant exists, and a deleted tenant's grants are revoked), so an owner learns
 * nothing about which tenants exist beyond what the policy says.
 */
export function grantViolations(
  spec: SharingSpec,
  policy: SharingPolicyConfig,
  now: Date,
  operatorTenant: string,
): GrantViolation[] {
  const checked = checkGrant(spec, policy, now);
  const refused = new Set(checked.filter((violation) => violation.rule === "grantees").map((v) => v.path));
  const violations = checked.filter((violation) => violation.rule !== "grantees");
  spec.grantees.forEach((grantee, index) => {
    if (grantee.tenant === spec.ownerTenant) return;
    const path = `grantees[${index}].tenant`;
    if (refused.has(path) || grantee.tenant === operatorTenant) {
      violations.push({
        path,
        rule: "grantees",
        message: `tenant "${grantee.tenant}" cannot receive grants (operator policy: grantees)`,
      });
    }
  });
  return violations
    .map((violation, index) => ({ violation, index }))
    .sort((a, b) => section(a.violation) - section(b.violation) || a.index - b.index)
    .map(({ violation }) => violation);
}

const approvalAnnotations = (spec: SharingSpec, by: string, at: Date) => ({
  [sharingAnnotations.approvedSpec]: specHash(spec),
  [sharingAnnotations.approvedBy]: by,
  [sharingAnnotations.approvedAt]: at.toISOString(),
});

export interface GrantFilter {
  owner?: string | undefined;
  state?: GrantState | undefined;
}

let policyOverride: SharingPolicyConfig | null = null;

/**
 * For integration tests, which reach the service through the router: the policy the service uses
 * instead of RING0_SHARING_POLICY (null: the configured one again). The environment is read once.
 */
export function overrideSharingPolicy(policy: SharingPolicyConfig | null): void {
  policyOverride = policy;
}

export function createSharingService(options: SharingServiceOptions = {}) {
  const policy = () => options.policy ?? policyOverride ?? sharingPolicy();
  const now = options.now ?? (() => new Date());
  const operatorTenant = () => options.operatorTenant ?? env().RING0_OPERATOR_TENANT;

  async function summaries(filter: GrantFilter): Promise<GrantSummary[]> {
    const { grants, displayNames } = await listGrantResources();
    const at = now();
    return grants
      .filter((grant) => !filter.owner || grant.spec?.ownerTenant === filter.owner)
      .map((grant) => summariseGrant(grant, at, displayNames.get(grant.spec.ownerTenant)))
      .filter((grant) => !filter.state || grant.state === filter.state)
      .sort((a, b) => a.owner.localeCompare(b.owner) || a.shortName.localeCompare(b.shortName));
  }

  /** The grant `name` (short or full) of `owner`, fresh from the API server. */
  async function ownedGrant(owner: string, name: string): Promise<SharingPolicyResource> {
    const full = name.startsWith(`${owner}.`) ? name : grantName(owner, name);
    let grant: SharingPolicyResource;
    try {
      grant = await readGrantResource(full);
    } catch (error) {
      if (error instanceof NotFoundError) throw missing(owner, name);
      throw error;
    }
    if (grant.spec?.ownerTenant !== owner) throw missing(owner, name);
    return grant;
  }

  function checked(spec: SharingSpec): void {
    const violations = grantViolations(spec, policy(), now(), operatorTenant());
    if (violations.length > 0) throw new InvalidInputError(violationsMessage(violations));
  }

  const summary = async (grant: SharingPolicyResource) =>
    summariseGrant(grant, now(), (await listGrantResources()).displayNames.get(grant.spec.ownerTenant));

  return {
    policy,

    /**
     * The operator policy in force as `user` may read it: owners need to know the limits before
     * they ask. Its grantors and grantees lists name real tenants, so only operators get them
     * (`null` for everyone else); anyone learns from `canGrant` and `canReceive` what the lists say
     * of their own tenant.
     */
    policySeenBy(user: SessionUser) {
      const { grantors, grantees, ...limits } = policy();
      const listed = (list: readonly string[]) => list.includes("*") || list.includes(user.tenant);
      const operator = isOperator(user);
      return {
        ...limits,
        floorApiGroups,
        canGrant: listed(grantors),
        canReceive: user.tenant !== operatorTenant() && listed(grantees),
        grantors: operator ? grantors : null,
        grantees: operator ? grantees : null,
      };
    },

    /** An owner's grants, by short name. */
    listOwned: (owner: string) => summaries({ owner }),

    /** Every grant (operators), optionally of one owner or in one state. */
    listAll: (filter: GrantFilter = {}) => summaries(filter),

    async getOwned(owner: string, name: string): Promise<GrantSummary> {
      return summary(await ownedGrant(owner, name));
    },

    /** Creates `<owner>.<shortName>`; approved at once unless the policy requires approval. */
    async create(
      actor: SharingActor,
      owner: string,
      shortName: string,
      input: GrantInput,
    ): Promise<{ grant: GrantSummary; spec: SharingSpec }> {
      const spec = grantSpec(owner, input);
      // The full name labels the grant's RBAC in the owner's control plane: a label value (≤ 63).
      const room = 63 - owner.length - 1;
      if (grantName(owner, shortName).length > 63) {
        throw new InvalidInputError(
          `The grant name "${shortName}" is too long for tenant "${owner}": use at most ${room} characters.`,
        );
      }
      checked(spec);
      const at = now();
      const created = await createGrantResource(shortName, spec, {
        [sharingAnnotations.requestedBy]: actor.name,
        ...(policy().requireApproval ? {} : approvalAnnotations(spec, automaticApprover, at)),
      });
      return { grant: await summary(created), spec };
    },

    /**
     * Replaces a grant's spec. With approval required the old approval no longer matches the spec,
     * so the grant waits for an operator again; otherwise it is approved in the same write.
     * `resourceVersion` (the one the editor read) refuses an edit over someone else's.
     */
    async update(
      actor: SharingActor,
      owner: string,
      name: string,
      input: GrantInput,
      resourceVersion?: string,
    ): Promise<{ grant: GrantSummary; before: SharingSpec; after: SharingSpec }> {
      const current = await ownedGrant(owner, name);
      if (resourceVersion && current.metadata.resourceVersion !== resourceVersion) {
        throw new ConflictError(
          `Grant "${name}" changed since it was opened; reload it and make the change again.`,
        );
      }
      if (current.metadata.annotations?.[sharingAnnotations.revokedAt]) {
        throw new ConflictError(
          `Grant "${name}" is revoked and cannot be edited; create a new grant instead.`,
        );
      }
      const spec = grantSpec(owner, input);
      checked(spec);
      const updated = await updateGrantSpec(current, spec, {
        [sharingAnnotations.requestedBy]: actor.name,
        ...(policy().requireApproval ? {} : approvalAnnotations(spec, automaticApprover, now())),
      });
      return { grant: await summary(updated), before: current.spec, after: spec };
    },

    /** Ends a grant at once (kept, for the record); revoking a revoked grant changes nothing. */
    async revoke(
      actor: SharingActor,
      name: string,
      owner?: string,
    ): Promise<{ grant: GrantSummary; changed: boolean }> {
      const current = owner ? await ownedGrant(owner, name) : await readGrantResource(name);
      if (current.metadata.annotations?.[sharingAnnotations.revokedAt]) {
        return { grant: await summary(current), changed: false };
      }
      const revoked = await setGrantAnnotations(current, {
        [sharingAnnotations.revokedBy]: actor.name,
        [sharingAnnotations.revokedAt]: now().toISOString(),
      });
      return { grant: await summary(revoked), changed: true };
    },

    /** Approves the grant's current spec, if it still passes the policy (operators). */
    async approve(
      actor: SharingActor,
      name: string,
    ): Promise<{ grant: GrantSummary; changed: boolean; spec: SharingSpec }> {
      const current = await readGrantResource(name);
      if (current.metadata.annotations?.[sharingAnnotations.revokedAt]) {
        throw new ConflictError(`Grant "${name}" is revoked; a revoked grant cannot be approved.`);
      }
      if (current.metadata.annotations?.[sharingAnnotations.approvedSpec] === specHash(current.spec)) {
        return { grant: await summary(current), changed: false, spec: current.spec };
      }
      checked(current.spec);
      const approved = await setGrantAnnotations(
        current,
        approvalAnnotations(current.spec, actor.name, now()),
      );
      return { grant: await summary(approved), changed: true, spec: current.spec };
    },

    /** Deletes a grant (its RBAC goes with it); resolves what it was. */
    async remove(
      owner: string,
      name: string,
    ): Promise<{ name: string; spec: SharingSpec; deleted: boolean }> {
      const current = await ownedGrant(owner, name);
      const deleted = await deleteGrantResource(current.metadata.name);
      return { name: current.metadata.name, spec: current.spec, deleted };
    },
  };
}

function missing(owner: string, name: string): NotFoundError {
  return new NotFoundError(`Tenant "${owner}" has no grant named "${name}".`);
}

export type SharingService = ReturnType<typeof createSharingService>;
