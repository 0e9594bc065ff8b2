/**
 * Quota templates in the database: named hard limits operators copy into tenants' quotas, at most
 * one of them the default new tenants start with. The only Prisma code of quotas' write side.
 */
import type { PrismaClient } from "@/server/db/client";
import { Prisma } from "@/server/db/client";
import { ConflictError, NotFoundError } from "@/server/errors";

export interface QuotaTemplateRow {
  name: string;
  description: string;
  /** Canonical resource name → quantity (validated before it was stored). */
  hard: Record<string, string>;
  isDefault: boolean;
  createdAt: Date;
  updatedAt: Date;
  updatedBy: string;
}

type Stored = Omit<QuotaTemplateRow, "hard"> & { hard: Prisma.JsonValue };

function row(stored: Stored): QuotaTemplateRow {
  const hard =
    stored.hard && typeof stored.hard === "object" && !Array.isArray(stored.hard)
      ? Object.fromEntries(Object.entries(stored.hard).map(([key, value]) => [key, String(value)]))
      : {};
  return { ...stored, hard };
}

function missing(name: string): NotFoundError {
  return new NotFoundError(`Quota template "${name}" was not found.`);
}

type Transaction = Parameters<Parameters<PrismaClient["$transaction"]>[0]>[0];

/** Serialises changes of the default: two at once could otherwise each leave theirs set. */
async function lockDefault(tx: Transaction): Promise<void> {
  await tx.$executeRaw`LOCK TABLE quota_templates IN SHARE ROW EXCLUSIVE MODE`;
}

const isKnownError = (error: unknown, code: string) =>
  error instanceof Prisma.PrismaClientKnownRequestError && error.code === code;

export function createQuotaTemplateRepository(db: PrismaClient) {
  return {
    async list(): Promise<QuotaTemplateRow[]> {
      return (await db.quotaTemplate.findMany({ orderBy: { name: "asc" } })).map(row);
    },

    async find(name: string): Promise<QuotaTemplateRow | null> {
      const found = await db.quotaTemplate.findUnique({ where: { name } });
      return found ? row(found) : null;
    },

    /** The template new tenants start with, if an operator chose one. */
    async findDefault(): Promise<QuotaTemplateRow | null> {
      const found = await db.quotaTemplate.findFirst({ where: { isDefault: true } });
      return found ? row(found) : null;
    },

    async create(template: {
      name: string;
      description: string;
      hard: Record<string, string>;
      isDefault: boolean;
      updatedBy: string;
    }): Promise<QuotaTemplateRow> {
      try {
        return await db.$transaction(async (tx) => {
          // At most one default: making this one the default takes it from the others.
          if (template.isDefault) {
            await lockDefault(tx);
            await tx.quotaTemplate.updateMany({ where: { isDefault: true }, data: { isDefault: false } });
          }
          return row(await tx.quotaTemplate.create({ data: template }));
        });
      } catch (error) {
        if (isKnownError(error, "P2002")) {
          throw new ConflictError(
            `name: a quota template named "${template.name}" already exists; choose another name or update it.`,
          );
        }
        throw error;
      }
    },

    async update(
      name: string,
      change: { description?: string; hard?: Record<string, string>; updatedBy: string },
    ): Promise<{ before: QuotaTemplateRow; after: QuotaTemplateRow }> {
      return db.$transaction(async (tx) => {
        const before = await tx.quotaTemplate.findUnique({ where: { name } });
        if (!before) throw missing(name);
        const after = await tx.quotaTemplate.update({ where: { name }, data: change });
        return { before: row(before), after: row(after) };
      });
    },

    async delete(name: string): Promise<QuotaTemplateRow> {
      try {
        return row(await db.quotaTemplate.delete({ where: { name } }));
      } catch (error) {
        if (isKnownError(error, "P2025")) throw missing(name);
        throw error;
      }
    },

    /** Makes `name` the only default (null: none); resolves the previous default's name. */
    async setDefault(name: string | null, updatedBy: string): Promise<string | null> {
      return db.$transaction(async (tx) => {
        await lockDefault(tx);
        const previous = await tx.quotaTemplate.findFirst({ where: { isDefault: true } });
        if (name !== null && !(await tx.quotaTemplate.findUnique({ where: { name } }))) throw missing(name);
        await tx.quotaTemplate.updateMany({ where: { isDefault: true }, data: { isDefault: false } });
        if (name !== null) {
          await tx.quotaTemplate.update({ where: { name }, data: { isDefault: true, updatedBy } });
        }
        return previous?.name ?? null;
      });
    },
  };
}

export type QuotaTemplateRepository = ReturnType<typeof createQuotaTemplateRepository>;
