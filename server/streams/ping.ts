import { z } from "zod";
import type { StreamEndpoint } from "./upgrade";

const clientFrame = z.object({ type: z.literal("ping"), id: z.string().max(64).optional() });

/**
 * /ws/ping: the first authenticated stream. Greets with who the server thinks you are and
 * answers pings; a malformed frame closes the stream with 1007 and a reason.
 */
export const pingEndpoint: StreamEndpoint = {
  open(socket, { user }) {
    socket.send(
      JSON.stringify({ type: "hello", user: { name: user.name, tenant: user.tenant, role: user.role } }),
    );
    socket.on("message", (data, isBinary) => {
      let frame: unknown;
      try {
        frame = isBinary ? undefined : JSON.parse(data.toString());
      } catch {
        frame = undefined;
      }
      const parsed = clientFrame.safeParse(frame);
      if (!parsed.success) {
        socket.close(1007, 'expected a JSON frame {"type":"ping"}');
        return;
      }
      socket.send(JSON.stringify({ type: "pong", id: parsed.data.id ?? null, at: new Date().toISOString() }));
    });
  },
};
