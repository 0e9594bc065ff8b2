export const dynamic = "force-dynamic";

/** Liveness: the process serves HTTP. No auth, no dependencies. */
export function GET() {
  return Response.json({ status: "ok" }, { headers: { "cache-control": "no-store" } });
}
