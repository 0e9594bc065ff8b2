import { z } from "zod";
import { createTRPCRouter, protectedProcedure } from "@/server/api/trpc";
import { homePath } from "@/server/core/roles";

const heartbeatInput = z
  .object({ intervalMs: z.number().int().min(1000).max(60_000).default(15_000) })
  .default({ intervalMs: 15_000 });

export const meRouter = createTRPCRouter({
  get: protectedProcedure.query(({ ctx }) => ({ ...ctx.user, home: homePath(ctx.user) })),

  /**
   * A heartbeat feed over SSE: proves the subscription path end to end and lets the shell show
   * that the server is reachable. Later feeds (tenant status, pods, nodes) follow this shape.
   */
  events: protectedProcedure.input(heartbeatInput).subscription(async function* ({ ctx, input, signal }) {
    let sequence = 0;
    while (!signal?.aborted) {
      sequence += 1;
      yield { type: "heartbeat" as const, sequence, at: new Date(), user: ctx.user.subject };
      await sleep(input.intervalMs, signal);
    }
  }),
});

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener(
      "abort",
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });
}
