import { localSuperCluster } from "@/server/cluster/local";
import { createLogger } from "@/server/logger";
import { e2eStateDir } from "./ports";

/** The e2e instance leaves its local super cluster running on exit; stop it so no process strays. */
export default async function globalTeardown() {
  await localSuperCluster({ stateDir: e2eStateDir, logger: createLogger({}, "warn") }).down();
}
