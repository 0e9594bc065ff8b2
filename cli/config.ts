/**
 * Where `ring0 login` keeps the URL and token: $XDG_CONFIG_HOME/ring0/config.json, else
 * ~/.config/ring0/config.json, readable by the user only (0600; its directory 0700).
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { z } from "zod";

export const storedConfig = z.object({
  url: z.url({ error: "url: expected an absolute URL" }),
  token: z.string().startsWith("r0_", "token: expected a Ring0 API token (r0_…)"),
});
export type StoredConfig = z.infer<typeof storedConfig>;

export function configPath(env: NodeJS.ProcessEnv | Record<string, string | undefined>): string {
  const base = env.XDG_CONFIG_HOME?.trim()
    ? env.XDG_CONFIG_HOME
    : path.join(env.HOME || os.homedir(), ".config");
  return path.join(base, "ring0", "config.json");
}

/** The stored config, or null when there is none; a damaged file is an error naming it. */
export function readConfig(file: string): StoredConfig | null {
  let text: string;
  try {
    text = fs.readFileSync(file, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw error;
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw new Error(`${file} is not valid JSON; run \`ring0 login\` again.`);
  }
  const parsed = storedConfig.safeParse(raw);
  if (!parsed.success)
    throw new Error(`${file} is damaged (${parsed.error.issues[0]?.message}); run \`ring0 login\` again.`);
  return parsed.data;
}

/** Written to a private temporary file and renamed, so the token is never readable by others. */
export function writeConfig(file: string, config: StoredConfig): void {
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const temporary = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(temporary, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });
  fs.chmodSync(temporary, 0o600);
  fs.renameSync(temporary, file);
}
