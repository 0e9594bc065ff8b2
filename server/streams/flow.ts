/**
 * Back-pressure between an upstream (a log response, an exec socket) and a browser's WebSocket:
 * when more than `highWaterBytes` wait to be written to the browser, the upstream is paused until
 * half of it has drained, so a browser that stops reading costs the server a fixed amount of memory
 * (about the high-water mark plus one chunk) instead of an ever-growing queue. A user's own pause
 * (`{"type":"pause"}`) holds the upstream too.
 */
import type { WebSocket } from "ws";

export interface Pausable {
  pause(): void;
  resume(): void;
}

export interface Flow {
  /** Sends a frame, pausing the upstream if the browser is behind. */
  send(data: string | Buffer): void;
  /** The user's pause/resume. */
  hold(held: boolean): void;
  /** Connects the upstream once it exists (it is paused at once if it must be). */
  attach(upstream: Pausable): void;
  stop(): void;
  /** For tests and metrics. */
  state(): { pressured: boolean; held: boolean; bufferedAmount: number };
}

export function createFlow(socket: WebSocket, highWaterBytes: number, pollMs = 25): Flow {
  let upstream: Pausable | undefined;
  let pressured = false;
  let held = false;
  let timer: NodeJS.Timeout | undefined;
  let paused = false;

  const apply = () => {
    const shouldPause = pressured || held;
    if (!upstream || shouldPause === paused) return;
    paused = shouldPause;
    if (paused) upstream.pause();
    else upstream.resume();
  };
  const watchDrain = () => {
    if (timer) return;
    timer = setInterval(() => {
      if (socket.readyState !== socket.OPEN || socket.bufferedAmount <= highWaterBytes / 2) {
        clearInterval(timer);
        timer = undefined;
        pressured = false;
        apply();
      }
    }, pollMs);
    timer.unref();
  };

  return {
    send(data) {
      if (socket.readyState !== socket.OPEN) return;
      socket.send(data);
      if (socket.bufferedAmount > highWaterBytes && !pressured) {
        pressured = true;
        apply();
        watchDrain();
      }
    },
    hold(value) {
      held = value;
      apply();
    },
    attach(next) {
      upstream = next;
      paused = false;
      apply();
    },
    stop() {
      if (timer) clearInterval(timer);
      timer = undefined;
    },
    state: () => ({ pressured, held, bufferedAmount: socket.bufferedAmount }),
  };
}
