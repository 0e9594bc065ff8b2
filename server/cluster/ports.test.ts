import net from "node:net";
import { describe, expect, it } from "vitest";
import { ephemeralPortRange, freeLoopbackPorts, listenPortWindow } from "./ports";

describe("ephemeralPortRange", () => {
  it("reads the kernel's range", () => {
    expect(ephemeralPortRange(() => "32768\t60999\n")).toEqual([32768, 60999]);
  });

  it("is null when it cannot be read or makes no sense", () => {
    const cases = ["", "32768", "abc def", "60999 32768", "0 100", "1024 70000"];
    for (const text of cases)
      expect(
        ephemeralPortRange(() => text),
        text,
      ).toBeNull();
    expect(
      ephemeralPortRange(() => {
        throw new Error("ENOENT");
      }),
    ).toBeNull();
  });
});

describe("listenPortWindow", () => {
  it("lies below the ephemeral range", () => {
    expect(listenPortWindow([32768, 60999])).toEqual([10_000, 32767]);
  });

  it("is null when there is no room below it or no range is known", () => {
    expect(listenPortWindow([10_500, 60999])).toBeNull();
    expect(listenPortWindow(null)).toBeNull();
  });
});

describe("freeLoopbackPorts", () => {
  it("gives distinct ports in the window that can be listened on", async () => {
    const window: [number, number] = [20_000, 29_999];
    const ports = await freeLoopbackPorts(8, window);
    expect(new Set(ports).size).toBe(8);
    for (const port of ports) {
      expect(port).toBeGreaterThanOrEqual(window[0]);
      expect(port).toBeLessThanOrEqual(window[1]);
    }
    const server = net.createServer();
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen({ host: "127.0.0.1", port: ports[0], exclusive: true }, resolve);
    });
    await new Promise((resolve) => server.close(resolve));
  });

  it("skips a port something listens on", async () => {
    const holder = net.createServer();
    const held = await new Promise<number>((resolve) =>
      holder.listen({ host: "127.0.0.1", port: 0 }, () =>
        resolve((holder.address() as net.AddressInfo).port),
      ),
    );
    try {
      // A window of one busy port: every try fails, so the kernel picks.
      const [port] = await freeLoopbackPorts(1, [held, held]);
      expect(port).not.toBe(held);
    } finally {
      await new Promise((resolve) => holder.close(resolve));
    }
  });

  it("lets the kernel pick without a window", async () => {
    const ports = await freeLoopbackPorts(3, null);
    expect(new Set(ports).size).toBe(3);
  });
});
