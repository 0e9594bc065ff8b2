/**
 * Plain requests through the gateway: bodies stream both ways, watches and followed logs included.
 * A chunked watch or log cannot carry a Status mid-stream: when its right ends the client sees it
 * end, reconnects, and is then told why (401, 403, 404).
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { pipeline } from "node:stream";
import { clientResponseHeaders } from "./headers";
import { newRecord } from "./request-record";
import { isLongRunning } from "./requests";
import { sendStatus } from "./status";
import type { StreamEnd } from "./stream-rights";
import { openUpstream, type ProxyContext, rewriteLocation } from "./upstream-request";

export async function proxyRequest(
  context: ProxyContext,
  request: IncomingMessage,
  response: ServerResponse,
) {
  const { requestLog, rights } = context;
  const record = newRecord(request, false);
  const done = requestLog.finisher(record);
  const admitted = await context.admit(request, record);
  if (admitted.denied) {
    requestLog.finishDenied(record, admitted);
    sendStatus(response, admitted.code, admitted.message, admitted.retryAfterSeconds);
    request.resume();
    return;
  }
  const upstreamRequest = openUpstream(request, admitted, record, context.responseTimeoutMs);
  let endedBecause: StreamEnd | undefined;
  const stopWatching = rights.endWhenRightEnds(record, admitted, (why) => {
    endedBecause = why;
    upstreamRequest.destroy();
    response.destroy();
  });
  response.on("close", () => {
    admitted.release();
    stopWatching();
    if (!response.writableFinished) {
      upstreamRequest.destroy();
      // A watch the client stops is a normal end: log the status it was served with.
      done(response.headersSent ? response.statusCode : 499, {
        error: endedBecause ? `ended by the gateway: ${endedBecause}` : "client closed the connection",
      });
    }
  });
  upstreamRequest.on("response", (upstreamResponse) => {
    const status = upstreamResponse.statusCode ?? 502;
    const auditId = upstreamResponse.headers["audit-id"];
    if (
      isLongRunning(record.method, admitted.apiPath, new URLSearchParams(admitted.upstreamPath.split("?")[1]))
    ) {
      upstreamRequest.setTimeout(0);
    }
    const responseHeaders = clientResponseHeaders(upstreamResponse.headers);
    rewriteLocation(responseHeaders, admitted);
    response.writeHead(status, upstreamResponse.statusMessage, responseHeaders);
    response.flushHeaders();
    pipeline(upstreamResponse, response, (error) => {
      done(status, {
        auditId: typeof auditId === "string" ? auditId : undefined,
        ...(error && !response.writableFinished ? { error: error.message } : {}),
      });
    });
  });
  upstreamRequest.on("error", (error) => {
    if (!response.headersSent) {
      sendStatus(
        response,
        502,
        `The control plane of tenant "${admitted.tenant}" could not be reached: ${error.message}`,
      );
      done(502, { error: error.message });
    } else {
      response.destroy();
      done(response.statusCode, { error: error.message });
    }
  });
  pipeline(request, upstreamRequest, (error) => {
    if (error) upstreamRequest.destroy(error);
  });
}
