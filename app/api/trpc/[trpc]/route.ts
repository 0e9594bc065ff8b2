import { handleTrpcRequest } from "@/server/api/http";

export const dynamic = "force-dynamic";

const handler = (req: Request) => handleTrpcRequest(req);

export { handler as GET, handler as POST };
