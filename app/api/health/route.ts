import { partsStarting } from "@/server/core/start-state";

export const dynamic = "force-dynamic";

/**
 * Liveness and start-up: the process serves HTTP and its start is done. While the super cluster or
 * the tenants' runtime still start behind the listening server, 503 naming them (pages already
 * serve; tests and the chart's startup probe wait for this). No auth, no dependencies probed.
 */
export function GET() {
  const starting = partsStarting();
  if (starting.length > 0)
    return Response.json(
      { status: "starting", starting },
      { status: 503, headers: { "cache-control": "no-store" } },
    );
  return Response.json({ status: "ok" }, { headers: { "cache-control": "no-store" } });
}
