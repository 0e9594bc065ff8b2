import { afterEach, describe, expect, it } from "vitest";
import { processSlot, processSlots } from "./process-slots";

describe("processSlot", () => {
  afterEach(() => processSlot("syncer").set(undefined));

  it("keeps one value per process under Symbol.for(ring0.<name>), whichever module graph asks", () => {
    const value = { stats: () => undefined };
    processSlot<typeof value>("syncer").set(value);
    expect(processSlot("syncer").get()).toBe(value);
    expect((globalThis as Record<symbol, unknown>)[Symbol.for("ring0.syncer")]).toBe(value);
  });

  it("makes a value once on first use and returns it afterwards", () => {
    let made = 0;
    const make = () => ({ n: ++made });
    const first = processSlot<{ n: number }>("syncer").ensure(make);
    const second = processSlot<{ n: number }>("syncer").ensure(make);
    expect(second).toBe(first);
    expect(made).toBe(1);
  });

  it("remakes a value cleared to null", () => {
    const slot = processSlot<{ n: number } | null>("syncer");
    slot.set(null);
    expect(slot.ensure(() => ({ n: 2 }))).toEqual({ n: 2 });
  });

  it("declares what every slot holds", () => {
    for (const [name, holds] of Object.entries(processSlots)) {
      expect(holds.length, name).toBeGreaterThan(10);
    }
  });
});
