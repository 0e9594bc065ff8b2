/**
 * Upgrades through the gateway (exec, attach, port-forward over SPDY or WebSocket): spliced socket
 * to socket once the tenant API server switched protocols; a refusal to switch (403 from RBAC, 404
 * for a missing pod…) is relayed as it came. A spliced session ends with its right, after a time
 * with no traffic either way, and (exec and attach) after the maximum session length.
 */
import type { IncomingMessage, OutgoingHttpHeaders } from "node:http";
import { Socket } from "node:net";
import type { Duplex } from "node:stream";
import type { Admitted } from "./admit";
import { clientResponseHeaders } from "./headers";
import { newRecord, type RequestEnd, type RequestRecord } from "./request-record";
import { auditedVerb } from "./requests";
import { statusOnSocket, unreachableAnswer } from "./status";
import { openUpstream, type ProxyContext, rewriteLocation } from "./upstream-request";

export interface UpgradeContext extends ProxyContext {
  /** An exec/attach/port-forward session with no traffic either way for this long is closed. */
  streamIdleTimeoutMs: number;
  /** Exec and attach sessions end after this long. */
  maxExecSessionMs: number;
  /** After one side of a spliced stream ends, how long the other may take to flush and close. */
  halfCloseGraceMs: number;
}

function serialiseHead(code: number, statusMessage: string, headers: OutgoingHttpHeaders): string {
  const lines = [`HTTP/1.1 ${code} ${statusMessage}`];
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    for (const item of Array.isArray(value) ? value : [value]) lines.push(`${name}: ${item}`);
  }
  return `${lines.join("\r\n")}\r\n\r\n`;
}

const auditIdOf = (response: IncomingMessage) => {
  const auditId = response.headers["audit-id"];
  return typeof auditId === "string" ? auditId : undefined;
};

/** The session once the tenant API server switched protocols: both sockets joined until either ends. */
function splice(
  context: UpgradeContext,
  session: { record: RequestRecord; admitted: Admitted; done: (status: number, extra?: RequestEnd) => void },
  client: { socket: Duplex; head: Buffer },
  upstream: { response: IncomingMessage; socket: Socket; head: Buffer },
) {
  const { record, admitted, done } = session;
  const { socket, head } = client;
  const { response: upstreamResponse, socket: upstreamSocket, head: upstreamHead } = upstream;
  const status = upstreamResponse.statusCode ?? 101;
  let closed = false;
  let stopWatching = () => {};
  let maxSession: NodeJS.Timeout | undefined;
  const closeBoth = () => {
    if (closed) return;
    closed = true;
    stopWatching();
    clearTimeout(maxSession);
    socket.destroy();
    upstreamSocket.destroy();
    admitted.release();
  };
  stopWatching = context.rights.endWhenRightEnds(record, admitted, closeBoth);
  const verb = auditedVerb(record.method, record.apiPath, true);
  if (verb === "exec" || verb === "attach") {
    // A shell left open is a door left open: it ends after the maximum session length.
    maxSession = setTimeout(() => {
      if (closed) return;
      context.rights.endedStream(record, admitted, "max-session");
      closeBoth();
    }, context.maxExecSessionMs);
    maxSession.unref();
  }
  if (socket.destroyed) {
    closeBoth();
    done(499, { error: "client closed the connection" });
    return;
  }
  socket.write(
    serialiseHead(
      status,
      upstreamResponse.statusMessage ?? "Switching Protocols",
      clientResponseHeaders(upstreamResponse.headers, true),
    ),
  );
  if (upstreamHead.length > 0) socket.write(upstreamHead);
  if (head.length > 0) upstreamSocket.write(head);
  for (const side of [socket, upstreamSocket]) {
    side.on("close", closeBoth);
    side.on("error", closeBoth);
    // One side finished: pipe() ends the other, which flushes what is still buffered for it (the
    // stream's last frames: exec's status, the WebSocket close). Destroying at once dropped them
    // (kubectl exec: "close 1006 (abnormal closure)"). Destroy only if the other never closes.
    side.on("end", () => setTimeout(closeBoth, context.halfCloseGraceMs).unref());
  }
  if (socket instanceof Socket) socket.setTimeout(context.streamIdleTimeoutMs, closeBoth);
  upstreamSocket.setTimeout(context.streamIdleTimeoutMs, closeBoth);
  upstreamSocket.pipe(socket);
  socket.pipe(upstreamSocket);
  done(status, { auditId: auditIdOf(upstreamResponse) });
}

export async function proxyUpgrade(
  context: UpgradeContext,
  request: IncomingMessage,
  socket: Duplex,
  head: Buffer,
) {
  const { requestLog } = context;
  const record = newRecord(request, true);
  const done = requestLog.finisher(record);
  socket.on("error", () => socket.destroy());
  const admitted = await context.admit(request, record);
  if (admitted.denied) {
    requestLog.finishDenied(record, admitted);
    socket.end(statusOnSocket(admitted.code, admitted.message, admitted.retryAfterSeconds));
    return;
  }
  if (socket.destroyed) {
    admitted.release();
    done(499, { error: "client closed the connection" });
    return;
  }
  // On 101 Node detaches the socket from the agent's pool; it is this session's alone.
  const upstreamRequest = openUpstream(request, admitted, record, context.responseTimeoutMs);
  let spliced = false;
  const closeBeforeSplice = () => {
    if (!spliced) {
      upstreamRequest.destroy();
      admitted.release();
      done(499, { error: "client closed the connection" });
    }
  };
  socket.once("close", closeBeforeSplice);

  upstreamRequest.on("upgrade", (upstreamResponse, upstreamSocket, upstreamHead) => {
    spliced = true;
    socket.off("close", closeBeforeSplice);
    upstreamRequest.setTimeout(0);
    splice(
      context,
      { record, admitted, done },
      { socket, head },
      { response: upstreamResponse, socket: upstreamSocket, head: upstreamHead },
    );
  });

  // The tenant API server refused to switch (403 from RBAC, 404 for a missing pod…): relay that.
  upstreamRequest.on("response", (upstreamResponse) => {
    const status = upstreamResponse.statusCode ?? 502;
    const chunks: Buffer[] = [];
    let size = 0;
    upstreamResponse.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size <= 64 * 1024) chunks.push(chunk);
    });
    upstreamResponse.on("end", () => {
      const body = Buffer.concat(chunks);
      const responseHeaders = clientResponseHeaders(upstreamResponse.headers);
      delete responseHeaders["content-length"];
      rewriteLocation(responseHeaders, admitted);
      responseHeaders["content-length"] = String(body.length);
      responseHeaders.connection = "close";
      spliced = true;
      socket.off("close", closeBeforeSplice);
      admitted.release();
      if (!socket.destroyed)
        socket.end(
          Buffer.concat([
            Buffer.from(serialiseHead(status, upstreamResponse.statusMessage ?? "", responseHeaders)),
            body,
          ]),
        );
      done(status, { auditId: auditIdOf(upstreamResponse) });
    });
    upstreamResponse.on("error", () => socket.destroy());
  });
  upstreamRequest.on("error", (error) => {
    if (spliced) return;
    spliced = true;
    socket.off("close", closeBeforeSplice);
    admitted.release();
    const answer = unreachableAnswer(admitted.tenant, error, record.method);
    if (!socket.destroyed) socket.end(statusOnSocket(answer.code, answer.message, answer.retryAfterSeconds));
    done(answer.code, { error: error.message });
  });
  upstreamRequest.end();
}
