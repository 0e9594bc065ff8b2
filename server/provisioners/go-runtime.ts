/**
 * The Go runtime settings every tenant control-plane process runs with (etcd, kube-apiserver,
 * kube-controller-manager; local and in pods alike).
 *
 * Where an idle tenant's memory goes (measured here, heap profile of an idle 1.36 API server): its
 * live heap is about 95 MiB, over half of it OpenAPI (the v3 documents marshalled at start ~28 MiB,
 * v2 ~18 MiB, the definitions ~15 MiB), none of which a flag reaches. With Go's default GOGC=100
 * the heap may grow to twice the live heap before a collection, so an idle API server sits at
 * ~185 MiB of anonymous memory. GOGC=25 keeps it at ~125 MiB (and etcd and the controller manager a
 * few MiB lighter) at no measurable idle CPU cost; GOGC=10 saves ~15 MiB more but collects twice as
 * often under load. A GOMEMLIMIT below the live heap makes the collector run continuously (a whole
 * core, measured), so none is set. bench/density.ts measures the profile against Go's default.
 */

/** Ring0's default GOGC for control-plane processes (RING0_CONTROL_PLANE_GOGC). */
export const DEFAULT_CONTROL_PLANE_GOGC = 25;

/** The environment of a control-plane process for a GOGC (Go's own default when undefined). */
export function goRuntimeEnv(goGc: number | undefined): Record<string, string> {
  return goGc === undefined ? {} : { GOGC: String(goGc) };
}
