import { readiness } from "@/server/health/readiness";

export const dynamic = "force-dynamic";

/** Readiness: each dependency's state; 503 while any is down so load balancers hold traffic. */
export async function GET() {
  const report = await readiness();
  return Response.json(report, {
    status: report.status === "ready" ? 200 : 503,
    headers: { "cache-control": "no-store" },
  });
}
