/**
 * Input schemas of the default namespace share procedures. Zod only (no server imports), so the
 * portal's form and the CLI check the same shapes; quantities and resource names are checked by the
 * server, which reports every bad entry at once.
 */
import { z } from "zod";
import { hardInput } from "./quotas.schema";

/** Resource name → quantity for each new namespace; null removes the default share. */
export const setDefaultShareSchema = z.object({ hard: hardInput.nullable() });
export type SetDefaultShareInput = z.input<typeof setDefaultShareSchema>;
