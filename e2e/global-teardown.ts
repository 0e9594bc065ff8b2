import { createLogger } from "@/server/logger";
import { removeLocalWorld } from "@/server/runtime/local-world";
import { e2eStateDir } from "./ports";

/**
 * The e2e instance leaves its local super cluster and tenant control planes running on exit (they
 * outlive Ring0 by design); remove them so no process strays.
 */
export default async function globalTeardown() {
  await removeLocalWorld(e2eStateDir, createLogger({}, "warn"));
}
