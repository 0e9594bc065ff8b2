/**
 * What the provisioning benchmark times: a control plane being brought up (a Ring0 tenant or a
 * bare kwokctl cluster), from the request to create it until `kubectl get ns` works, and what it
 * weighs once idle.
 */
import fs from "node:fs";
import path from "node:path";
import { LOCAL_COMPONENTS } from "@/server/provisioners/local";
import { round } from "../lib/figures";
import { memoryKiB } from "../lib/memory";
import { sleep } from "../lib/run";

/** How long a control plane may take to serve, or to go. */
export const TIMEOUT_MS = 5 * 60_000;

/** One control plane being brought up: what to time, how to reach it, how to remove it. */
export interface Subject {
  name: string;
  /** Starts it; resolves when the request to create it has been made (kwokctl: when it returned). */
  create(): Promise<void>;
  /** A cheap probe (one HTTPS GET of /api/v1/namespaces) for polling. */
  probe(): Promise<boolean>;
  /** The real check: `kubectl get ns`. */
  kubectlGetNs(): Promise<boolean>;
  /** Pid files of etcd, kube-apiserver, kube-controller-manager. */
  pidDir: string;
  remove(): Promise<void>;
  /** Bare only: `kwokctl start cluster` (starts the components that are not running, waits until served). */
  restart?(): Promise<void>;
  /** Ring0 only: the Tenant's own status timings (ms after its creation), read once it serves. */
  phases?(): Promise<Record<string, number>>;
}

/**
 * Create → kubectl get ns works. Polls with the cheap probe so 5 pollers do not load 2 cores;
 * `check` runs on every poll (it throws once the run is being stopped).
 */
export async function timeToKubectl(subject: Subject, check: () => void): Promise<number> {
  const started = performance.now();
  await subject.create();
  const deadline = Date.now() + TIMEOUT_MS;
  for (;;) {
    if (await subject.probe().catch(() => false)) {
      if (await subject.kubectlGetNs()) return performance.now() - started;
    }
    if (Date.now() > deadline) throw new Error(`${subject.name}: kubectl get ns did not succeed in time`);
    check();
    await sleep(100);
  }
}

/** A file's text, or undefined while it does not exist yet. */
export function readPem(file: string): string | undefined {
  try {
    return fs.readFileSync(file, "utf8");
  } catch {
    return undefined;
  }
}

/**
 * Each control plane's memory (MiB), summed over its three components, from kwokctl's pid files:
 * resident, proportional (the binaries' pages shared among the planes measured together) and
 * anonymous (what one more plane adds once many share the binaries).
 */
export function controlPlaneMemory(subjects: Subject[]) {
  const perPlane = subjects.map((subject) => {
    const byComponent: Record<string, { rss: number; pss: number; anonymous: number }> = {};
    for (const component of LOCAL_COMPONENTS) {
      const pid = Number(readPem(path.join(subject.pidDir, `${component}.pid`))?.trim());
      const kib = Number.isInteger(pid) && pid > 0 ? memoryKiB(pid) : undefined;
      if (!kib?.rss) throw new Error(`${subject.name}: no running ${component} to measure`);
      byComponent[component] = {
        rss: round(kib.rss / 1024),
        pss: round(kib.pss / 1024),
        anonymous: round(kib.anonymous / 1024),
      };
    }
    const sum = (key: "rss" | "pss" | "anonymous") =>
      round(Object.values(byComponent).reduce((total, memory) => total + memory[key], 0));
    return {
      name: subject.name,
      rssMiB: sum("rss"),
      pssMiB: sum("pss"),
      anonymousMiB: sum("anonymous"),
      byComponent,
    };
  });
  const mean = (key: "rssMiB" | "pssMiB" | "anonymousMiB") =>
    round(perPlane.reduce((total, plane) => total + plane[key], 0) / perPlane.length);
  return {
    meanRssMiB: mean("rssMiB"),
    meanPssMiB: mean("pssMiB"),
    meanAnonymousMiB: mean("anonymousMiB"),
    maxRssMiB: round(Math.max(...perPlane.map((plane) => plane.rssMiB))),
    perPlane,
  };
}
