/**
 * Free ports on 127.0.0.1 for the components of Ring0's kwokctl clusters: picked below the kernel's
 * ephemeral range when there is room, so outgoing connections cannot take them between picking and
 * binding; and probes of whether a port is free or listened on.
 */
import fs from "node:fs";
import net from "node:net";
import type { KwokctlPortOption } from "./kwokctl-config";

/** Lowest port Ring0 hands to a component it starts (below it: well-known and registered services). */
const LISTEN_PORT_FLOOR = 10_000;
const LISTEN_PORT_TRIES = 200;

/** The kernel's ephemeral range, `[low, high]`: outgoing connections take their local port from it. */
export function ephemeralPortRange(
  read: () => string = () => fs.readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8"),
): [number, number] | null {
  try {
    const [low = Number.NaN, high = Number.NaN] = read().trim().split(/\s+/).map(Number);
    if (Number.isInteger(low) && Number.isInteger(high) && low > 0 && low <= high && high < 65536)
      return [low, high];
  } catch {
    // Not Linux, or /proc is not mounted: the kernel picks (port 0).
  }
  return null;
}

/**
 * Where to look for ports a component will listen on later: below the ephemeral range. A port the
 * kernel hands out for `:0` lies inside it, so between picking and binding, any outgoing connection
 * on the machine (ten control planes starting at once make thousands) may take it and the component
 * then exits with "address already in use". Below the range only listeners compete, and binding
 * first tells whether one holds the port. Null when that window is too small to pick from.
 */
export function listenPortWindow(range = ephemeralPortRange()): [number, number] | null {
  if (!range) return null;
  const high = range[0] - 1;
  return high - LISTEN_PORT_FLOOR >= 1_000 ? [LISTEN_PORT_FLOOR, high] : null;
}

function listenOn(port: number): Promise<net.Server | undefined> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once("error", (error: NodeJS.ErrnoException) =>
      port !== 0 && (error.code === "EADDRINUSE" || error.code === "EACCES")
        ? resolve(undefined)
        : reject(error),
    );
    server.listen({ host: "127.0.0.1", port, exclusive: true }, () => resolve(server));
  });
}

/**
 * Free ports on 127.0.0.1 for components to listen on, held open together so they are distinct,
 * then released. Taken from below the ephemeral range when there is room ({@link listenPortWindow}),
 * else from the kernel.
 */
export async function freeLoopbackPorts(count: number, window = listenPortWindow()): Promise<number[]> {
  const servers: net.Server[] = [];
  try {
    for (let tries = 0; window && servers.length < count && tries < LISTEN_PORT_TRIES; tries++) {
      const port = window[0] + Math.floor(Math.random() * (window[1] - window[0] + 1));
      const server = await listenOn(port);
      if (server) servers.push(server);
    }
    while (servers.length < count) servers.push((await listenOn(0)) as net.Server);
    return servers.map((server) => (server.address() as net.AddressInfo).port);
  } finally {
    await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  }
}

/** A free port on 127.0.0.1 for each named option. */
export async function freePortsFor<K extends KwokctlPortOption>(
  options: readonly K[],
): Promise<Record<K, number>> {
  const ports = await freeLoopbackPorts(options.length);
  return Object.fromEntries(options.map((option, index) => [option, ports[index]])) as Record<K, number>;
}

export async function isPortFree(port: number): Promise<boolean> {
  const server = await listenOn(port).catch(() => undefined);
  if (!server) return false;
  await new Promise((resolve) => server.close(resolve));
  return true;
}

/** True when something accepts connections on 127.0.0.1:`port`. */
export function isListening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: "127.0.0.1", port });
    socket.setTimeout(2_000, () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}
