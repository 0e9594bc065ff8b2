import { describe, expect, it } from "vitest";
import { K8sError } from "@/server/k8s/errors";
import { NotYetError } from "./controller";
import { type CustomResourceKind, type CustomResourceObject, createCustomResource } from "./custom-resource";
import { fakeCustomResources } from "./fake-custom-resources";

interface WidgetStatus {
  phase?: string;
}
type Widget = CustomResourceObject<WidgetStatus>;

const kind: CustomResourceKind = {
  apiVersion: "example.dev/v1",
  kind: "Widget",
  plural: "widgets",
  finalizer: "example.dev/cleanup",
  component: "widget-controller",
};

const widget = (finalizers?: string[]): Widget => ({
  metadata: { name: "w", uid: "uid-w", ...(finalizers ? { finalizers } : {}) },
});

describe("createCustomResource", () => {
  it("reads fresh, and null once the object is gone", async () => {
    const { store, objects } = fakeCustomResources([widget()]);
    const widgets = createCustomResource<Widget, WidgetStatus>(kind, store);
    expect((await widgets.read("w"))?.metadata.uid).toBe("uid-w");
    objects.delete("w");
    expect(await widgets.read("w")).toBeNull();
  });

  it("adds the finalizer after the ones already there", async () => {
    const { store, objects } = fakeCustomResources([widget(["other/keep"])]);
    const widgets = createCustomResource<Widget, WidgetStatus>(kind, store);
    const read = (await widgets.read("w")) as Widget;
    expect(widgets.hasFinalizer(read)).toBe(false);
    const patched = await widgets.addFinalizer(read);
    expect(patched.metadata.finalizers).toEqual(["other/keep", kind.finalizer]);
    expect(widgets.hasFinalizer(patched)).toBe(true);
    expect(objects.get("w")?.metadata.finalizers).toEqual(["other/keep", kind.finalizer]);
  });

  it("removes only its own finalizer, from a fresh read, and says when there was none to remove", async () => {
    const { store, objects, log } = fakeCustomResources([widget(["other/keep", kind.finalizer])]);
    const widgets = createCustomResource<Widget, WidgetStatus>(kind, store);
    const stale = (await widgets.read("w")) as Widget;
    // Someone else writes meanwhile: the removal must not be refused for the stale resourceVersion.
    await store.mergePatch(
      { apiVersion: kind.apiVersion, resource: kind.plural, name: "w" },
      {
        metadata: { labels: { touched: "yes" }, resourceVersion: stale.metadata.resourceVersion },
      },
    );
    expect(await widgets.removeFinalizer("w")).toBe(true);
    expect(objects.get("w")?.metadata.finalizers).toEqual(["other/keep"]);
    const patches = log.length;
    expect(await widgets.removeFinalizer("w")).toBe(false);
    objects.delete("w");
    expect(await widgets.removeFinalizer("w")).toBe(false);
    expect(log).toHaveLength(patches);
  });

  it("lets a lost race be an error, or a quiet requeue when the kind says so", async () => {
    const { store } = fakeCustomResources([widget()]);
    const stale = { ...widget(), metadata: { ...widget().metadata, resourceVersion: "0" } };
    const strict = createCustomResource<Widget, WidgetStatus>(kind, store);
    await expect(strict.addFinalizer(stale)).rejects.toBeInstanceOf(K8sError);
    const quiet = createCustomResource<Widget, WidgetStatus>(
      { ...kind, requeueOnConflict: "the widget changed meanwhile" },
      store,
    );
    const error = await quiet.addFinalizer(stale).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(NotYetError);
    expect(error).toMatchObject({ message: "the widget changed meanwhile", requeueAfterMs: 0 });
  });

  it("writes status only when it changes, and reports the status it replaced", async () => {
    const { store, log } = fakeCustomResources([widget()]);
    const widgets = createCustomResource<Widget, WidgetStatus>(kind, store);
    const first = await widgets.writeStatus("w", () => ({ phase: "Provisioning" }));
    expect(first).toEqual({ previous: {}, status: { phase: "Provisioning" } });
    const again = await widgets.writeStatus("w", () => ({ phase: "Provisioning" }));
    expect(again).toEqual({ previous: { phase: "Provisioning" }, status: { phase: "Provisioning" } });
    const ready = await widgets.writeStatus("w", (previous) => ({ ...previous, phase: "Ready" }));
    expect(ready.previous).toEqual({ phase: "Provisioning" });
    expect(log.filter((line) => line.startsWith("status"))).toEqual([
      'status w {"phase":"Provisioning"}',
      'status w {"phase":"Ready"}',
    ]);
  });

  it("records Events about the object under its kind", async () => {
    const { store, events } = fakeCustomResources([widget()]);
    const widgets = createCustomResource<Widget, WidgetStatus>(kind, store);
    await widgets.event(widget(), "Warning", "Failed", "it broke");
    expect(events).toEqual([
      {
        target: { apiVersion: "example.dev/v1", kind: "Widget", name: "w", uid: "uid-w" },
        type: "Warning",
        reason: "Failed",
        message: "it broke",
      },
    ]);
  });
});
