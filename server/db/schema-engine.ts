/**
 * Prisma's schema engine, compiled to WebAssembly (`@prisma/schema-engine-wasm`), connected to
 * PostgreSQL through the `@prisma/adapter-pg` driver adapter: loaded once per process, started per
 * use with `withSchemaEngine`, which also hands it throwaway shadow databases and closes every
 * connection it opened. migrations.ts drives it.
 */
import { randomUUID } from "node:crypto";
import fs from "node:fs/promises";
import { createRequire } from "node:module";
import path from "node:path";
import { PrismaPg } from "@prisma/adapter-pg";
import {
  bindMigrationAwareSqlAdapterFactory,
  ColumnTypeEnum,
  type SqlDriverAdapter,
  type SqlMigrationAwareDriverAdapterFactory,
  type SqlQueryable,
} from "@prisma/driver-adapter-utils";
import type { SchemaEngine } from "@prisma/schema-engine-wasm";
import pg from "pg";
import type { Logger } from "@/server/logger";

type SchemaEngineModule = typeof import("@prisma/schema-engine-wasm");
let engineModule: Promise<SchemaEngineModule> | undefined;
let lastPanic: string | undefined;

/**
 * Instantiate the engine's WebAssembly once per process. The package's entry point imports the .wasm
 * as an ES module (`import * as wasm from "./schema_engine_bg.wasm"`), which neither tsx nor Vite
 * load; so do what that entry point does by hand: instantiate the module with the JS glue as its
 * imports, hand the instance to the glue, and run the start function.
 */
function loadSchemaEngineModule(): Promise<SchemaEngineModule> {
  engineModule ??= (async () => {
    const require = createRequire(path.join(process.cwd(), "package.json"));
    const gluePath = require.resolve("@prisma/schema-engine-wasm/schema_engine_bg");
    const glue = (await import("@prisma/schema-engine-wasm/schema_engine_bg")) as SchemaEngineModule & {
      __wbg_set_wasm(exports: WebAssembly.Exports): void;
    };
    const bytes = await fs.readFile(path.join(path.dirname(gluePath), "schema_engine_bg.wasm"));
    const module = await WebAssembly.compile(bytes);
    const imports: WebAssembly.ModuleImports = { ...(glue as unknown as WebAssembly.ModuleImports) };
    for (const name of Object.keys(imports).filter((key) => key.startsWith("__wbg_setTimeout_"))) {
      // The engine never clears its timers (e.g. the 10 s timeout racing its advisory-lock wait), which
      // would keep the process alive for 10 s after migrating. Unref them: pending I/O still does.
      imports[name] = (callback: () => void, ms: number) => {
        const timer = setTimeout(callback, ms >>> 0);
        timer.unref();
        return timer;
      };
    }
    const instance = await WebAssembly.instantiate(module, { "./schema_engine_bg.js": imports });
    // The engine reports Rust panics through this global before trapping; without it the panic
    // hook itself throws a TypeError and the real message is lost.
    const registry = globalThis as { PRISMA_WASM_PANIC_REGISTRY?: { set_message(message: string): void } };
    registry.PRISMA_WASM_PANIC_REGISTRY ??= {
      set_message: (message) => {
        lastPanic = message;
        process.stderr.write(
          `${JSON.stringify({ level: "error", msg: "Prisma schema engine panicked", panic: message })}\n`,
        );
      },
    };
    glue.__wbg_set_wasm(instance.exports);
    (instance.exports.__wbindgen_start as () => void)();
    return glue;
  })();
  engineModule.catch(() => {
    engineModule = undefined;
  });
  return engineModule;
}

/**
 * Run `fn` with a schema engine connected to `databaseUrl`, then free it and close every connection
 * the engine opened (the engine does not always dispose its adapters when freed).
 */
export async function withSchemaEngine<T>(
  databaseUrl: string,
  log: Logger,
  datamodels: [string, string][] | undefined,
  fn: (engine: SchemaEngine) => Promise<T>,
): Promise<T> {
  const wasm = await loadSchemaEngineModule();
  const opened: SqlDriverAdapter[] = [];
  const track = (adapter: SqlDriverAdapter): SqlDriverAdapter => {
    const dispose = adapter.dispose.bind(adapter);
    let disposed: Promise<void> | undefined;
    adapter.dispose = () => {
      disposed ??= dispose();
      return disposed;
    };
    opened.push(adapter);
    return adapter;
  };
  const factory: SqlMigrationAwareDriverAdapterFactory = {
    provider: "postgres",
    adapterName: "@prisma/adapter-pg",
    connect: async () => track(await connectAdapter(databaseUrl, log)),
    // Not PrismaPg#connectToShadowDb: with a connection string it spreads `{ ...config, database }`,
    // and node-postgres lets the connection string win, so the "shadow" would be the main database.
    connectToShadowDb: async () => track(await connectToShadowDatabase(databaseUrl, log)),
  };

  let poisoned = false;
  const panicked = (): Error | undefined => {
    if (lastPanic === undefined) return undefined;
    // No method is safe to call on a WASM instance after a panic: start from a fresh one next time.
    const error = new Error(`Prisma schema engine panicked: ${lastPanic}`);
    lastPanic = undefined;
    engineModule = undefined;
    poisoned = true;
    return error;
  };
  const engine = await wasm.SchemaEngine.new(
    { datamodels },
    (message: string) => log.debug("schema engine", { event: message }),
    bindMigrationAwareSqlAdapterFactory(factory),
  );
  try {
    return await fn(engine);
  } catch (error) {
    throw panicked() ?? error;
  } finally {
    if (!poisoned) engine.free();
    // Shadow databases last, then the main connection (the shadow's dispose drops its database).
    for (const adapter of opened.reverse()) {
      await adapter
        .dispose()
        .catch((error: unknown) => log.warn("closing schema engine connection", { error }));
    }
  }
}

/** A throwaway database on the same server, dropped when the adapter is disposed. */
async function connectToShadowDatabase(databaseUrl: string, log: Logger): Promise<SqlDriverAdapter> {
  const name = `prisma_migrate_shadow_db_${randomUUID()}`;
  const admin = new pg.Client({ connectionString: databaseUrl });
  await admin.connect();
  const database = admin.escapeIdentifier(name);
  await admin.query(`CREATE DATABASE ${database}`);
  const url = new URL(databaseUrl);
  url.pathname = `/${encodeURIComponent(name)}`;
  let adapter: SqlDriverAdapter;
  try {
    adapter = await connectAdapter(url.toString(), log);
  } catch (error) {
    await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`).catch(() => undefined);
    await admin.end();
    throw error;
  }
  log.debug("created shadow database", { database: name });
  const dispose = adapter.dispose.bind(adapter);
  adapter.dispose = async () => {
    try {
      await dispose();
      await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
    } finally {
      await admin.end();
    }
  };
  return adapter;
}

/**
 * A PrismaPg adapter for the schema engine, taught PostgreSQL's internal `"char"` type (oid 18, e.g.
 * pg_constraint.contype or confdeltype, which the engine reads when describing a schema). adapter-pg has
 * no mapping for it and fails with "Column type 'char' could not be deserialized from the database".
 * The pool's client relabels such columns as text so adapter-pg accepts them (the value is already a
 * one-character string), and the adapter then reports them to the engine as `Character`, which is what
 * the engine's describer expects (it panics on a text value there).
 */
async function connectAdapter(connectionString: string, log: Logger): Promise<SqlDriverAdapter> {
  const pool = new pg.Pool({ connectionString, Client: CharAsTextClient, max: 2 });
  const adapter = await new PrismaPg(pool, {
    disposeExternalPool: true,
    onPoolError: (error) => log.warn("schema engine pool error", { error }),
  }).connect();
  return withCharacterColumns(adapter);
}

function withCharacterColumns<T extends SqlQueryable>(queryable: T): T {
  const queryRaw = queryable.queryRaw.bind(queryable);
  queryable.queryRaw = async (query) => {
    const result = await queryRaw(query);
    for (const index of charColumns.get(result.rows) ?? [])
      result.columnTypes[index] = ColumnTypeEnum.Character;
    return result;
  };
  const adapter = queryable as unknown as Partial<SqlDriverAdapter>;
  if (adapter.startTransaction) {
    const startTransaction = adapter.startTransaction.bind(adapter);
    adapter.startTransaction = async (isolationLevel) =>
      withCharacterColumns(await startTransaction(isolationLevel));
  }
  return queryable;
}

const PG_CHAR_OID = 18;
const PG_TEXT_OID = 25;
/** Result rows (the array adapter-pg passes through) → indices of their `"char"` columns. */
const charColumns = new WeakMap<unknown[], number[]>();

function charAsText<T>(result: T): T {
  for (const each of Array.isArray(result) ? result : [result]) {
    const { fields, rows } = (each ?? {}) as { fields?: { dataTypeID: number }[]; rows?: unknown[] };
    const indices: number[] = [];
    fields?.forEach((field, index) => {
      if (field.dataTypeID !== PG_CHAR_OID) return;
      field.dataTypeID = PG_TEXT_OID;
      indices.push(index);
    });
    if (indices.length > 0 && rows) charColumns.set(rows, indices);
  }
  return result;
}

class CharAsTextClient extends pg.Client {
  // node-postgres' query() has many overloads (promise or callback as last argument); patch both.
  // biome-ignore lint/suspicious/noExplicitAny: forwarding every overload of pg.Client#query.
  override query(...args: any[]): any {
    const last = args.length - 1;
    const callback = args[last];
    if (typeof callback === "function") {
      args[last] = (error: unknown, result: unknown) => callback(error, error ? result : charAsText(result));
    }
    const query = super.query as (...a: unknown[]) => unknown;
    const returned = query.apply(this, args);
    return returned instanceof Promise ? returned.then(charAsText) : returned;
  }
}
