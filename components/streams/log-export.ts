/**
 * Lines as text for Download and Copy: one line each, with the timestamp when the view shows
 * timestamps and the pod's name in a multi-pod view. Pure; unit-tested.
 */
import type { HeldLine } from "@/components/streams/log-buffer";

export interface LogTextOptions {
  timestamps: boolean;
  /** Names of the view's streams by source index, prefixed as `[name] ` when given. */
  sourceNames?: readonly string[];
}

export function logText(lines: Iterable<HeldLine>, options: LogTextOptions): string {
  const parts: string[] = [];
  for (const line of lines) {
    const source = options.sourceNames ? `[${options.sourceNames[line.source] ?? line.source}] ` : "";
    const ts = options.timestamps && line.ts ? `${line.ts} ` : "";
    parts.push(`${ts}${source}${line.text}\n`);
  }
  return parts.join("");
}

/** A file name such as `web-app-20250102T030405Z.log` (safe characters only). */
export function logFileName(subject: string, at: Date): string {
  const stamp = at
    .toISOString()
    .replace(/\.\d+Z$/, "Z")
    .replace(/[-:]/g, "");
  const safe = subject.replace(/[^A-Za-z0-9._-]+/g, "-").replace(/^-+|-+$/g, "") || "logs";
  return `${safe}-${stamp}.log`;
}

/** The colour of a stream in a multi-pod view, cycling through a palette readable on both themes. */
export const sourcePalette = [
  "light-dark(#1971c2, #74c0fc)",
  "light-dark(#2b8a3e, #8ce99a)",
  "light-dark(#c2255c, #faa2c1)",
  "light-dark(#e8590c, #ffc078)",
  "light-dark(#6741d9, #b197fc)",
  "light-dark(#0c8599, #66d9e8)",
  "light-dark(#a61e4d, #ffa8a8)",
  "light-dark(#5c940d, #c0eb75)",
] as const;

export function sourceColour(source: number): string {
  return sourcePalette[source % sourcePalette.length] ?? sourcePalette[0];
}

export interface PodRef {
  namespace: string;
  name: string;
}

/** How a multi-pod view names its pods: by name alone when they share a namespace. */
export function podLabels(pods: readonly PodRef[]): string[] {
  const namespaces = new Set(pods.map((pod) => pod.namespace));
  return pods.map((pod) => (namespaces.size > 1 ? `${pod.namespace}/${pod.name}` : pod.name));
}
