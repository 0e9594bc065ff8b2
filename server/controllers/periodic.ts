/**
 * A loop that runs `round` every `intervalMs` after the previous round settled, so two never
 * overlap however long one takes. A round that throws is reported and the loop goes on; `stop`
 * ends it and waits for a round under way. The timer never keeps the process alive.
 */
export function runPeriodically(
  intervalMs: number,
  round: () => Promise<void>,
  onError: (error: unknown) => void,
): { stop(): Promise<void> } {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let current: Promise<void> = Promise.resolve();
  const schedule = () => {
    if (stopped) return;
    timer = setTimeout(() => {
      current = round().catch(onError).finally(schedule);
    }, intervalMs);
    timer.unref?.();
  };
  schedule();
  return {
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await current;
    },
  };
}
