/**
 * Streaming requests to one API server: followed logs as a GET whose body streams, and exec or
 * attach over a WebSocket. A tenant's control plane (ControlPlaneClient.streaming) and the super
 * cluster (server/streams/sources.ts) both answer in this shape.
 */
import type { IncomingMessage } from "node:http";
import https from "node:https";
import type WebSocket from "ws";
import { errorFromResponse, toK8sError } from "./errors";

/** Streaming requests to one API server (ControlPlaneClient.streaming, and the super cluster's). */
export interface StreamUpstream {
  /** Who answers, for messages: `tenant "acme"`, `the super cluster`. */
  label: string;
  /** A GET whose body streams; a non-2xx answer rejects with a K8sError carrying the Status. */
  get(path: string, signal: AbortSignal): Promise<IncomingMessage>;
  /** A WebSocket (exec, attach) with the given subprotocols. */
  webSocket(path: string, protocols: string[]): WebSocket;
}

/** Opens a GET and resolves with the response once its status is 2xx (the body then streams). */
export function streamingGet(
  options: https.RequestOptions,
  signal: AbortSignal,
  where: string,
): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const outgoing = https.request({ ...options, method: "GET", signal }, (response) => {
      const status = response.statusCode ?? 0;
      if (status >= 200 && status < 300) {
        resolve(response);
        return;
      }
      const chunks: Buffer[] = [];
      let size = 0;
      response.on("data", (chunk: Buffer) => {
        size += chunk.length;
        if (size <= 65_536) chunks.push(chunk);
      });
      response.on("error", (error) => reject(toK8sError(error, where)));
      response.on("end", () => reject(errorFromResponse(status, Buffer.concat(chunks).toString("utf8"))));
    });
    // No response timeout: a followed log of a quiet container sends its headers with its first
    // line, which may be hours away. The caller's signal ends it (the browser went away).
    outgoing.on("error", (error) => reject(toK8sError(error, where)));
    outgoing.end();
  });
}
