/**
 * An in-memory CustomResourceStore for unit tests of reconcilers: objects by name with
 * resourceVersions (a patch or status write with a stale one is a 409, a missing object a 404, as
 * the API server answers), and a log of every write and Event in order, so tests can assert what a
 * reconcile did and in which order (a finalizer dropped only after cleanup).
 */
import { K8sError } from "@/server/k8s/errors";
import type { EventTarget, RecordedEvent } from "@/server/k8s/events";
import type { CustomResourceObject, CustomResourceStore } from "./custom-resource";
import type { ResourceRef } from "./status";

export interface FakeCustomResources<T extends CustomResourceObject<object>> {
  store: CustomResourceStore;
  /** The stored objects by name; tests change them as other writers would (without a new resourceVersion). */
  objects: Map<string, T>;
  /** Every write and Event, in order: `patch <name> <metadata>`, `status <name> <status>`, `event <reason>`. */
  log: string[];
  events: (RecordedEvent & { target: EventTarget })[];
  /** Status writes so far. */
  statusWrites(): number;
}

const conflict = () =>
  new K8sError({ status: 409, reason: "Conflict", message: "the object has been modified" });

export function fakeCustomResources<T extends CustomResourceObject<object>>(
  initial: readonly T[],
): FakeCustomResources<T> {
  const objects = new Map(initial.map((object) => [object.metadata.name, structuredClone(object)]));
  let version = 1;
  for (const object of objects.values()) object.metadata.resourceVersion = String(version);
  const log: string[] = [];
  const events: (RecordedEvent & { target: EventTarget })[] = [];
  const current = (ref: ResourceRef) => {
    const object = objects.get(ref.name);
    if (!object) throw new K8sError({ status: 404, reason: "NotFound", message: `${ref.name} not found` });
    return object;
  };
  const copy = <R>(object: T): R => structuredClone(object) as unknown as R;
  const bump = (object: T) => {
    object.metadata.resourceVersion = String(++version);
  };
  const store: CustomResourceStore = {
    async get<R>(ref: ResourceRef) {
      const object = objects.get(ref.name);
      return object ? copy<R>(object) : null;
    },
    async read<R>(ref: ResourceRef) {
      return copy<R>(current(ref));
    },
    async mergePatch<R>(ref: ResourceRef, patch: object) {
      const object = current(ref);
      const { resourceVersion, ...metadata } = (patch as { metadata: T["metadata"] }).metadata;
      if (resourceVersion !== undefined && resourceVersion !== object.metadata.resourceVersion) {
        throw conflict();
      }
      log.push(`patch ${ref.name} ${JSON.stringify(metadata)}`);
      Object.assign(object.metadata, metadata);
      bump(object);
      return copy<R>(object);
    },
    async writeStatus<R>(ref: ResourceRef, next: R) {
      const object = current(ref);
      const candidate = next as unknown as T;
      if (candidate.metadata.resourceVersion !== object.metadata.resourceVersion) throw conflict();
      log.push(`status ${ref.name} ${JSON.stringify(candidate.status)}`);
      object.status = structuredClone(candidate.status);
      bump(object);
      return copy<R>(object);
    },
    async recordEvent(target, event) {
      log.push(`event ${event.reason}`);
      events.push({ target, ...event });
    },
  };
  return {
    store,
    objects,
    log,
    events,
    statusWrites: () => log.filter((line) => line.startsWith("status ")).length,
  };
}
