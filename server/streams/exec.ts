/**
 * /ws/exec: an interactive shell in a pod, from the browser. Query in protocol.ts (execQuery); the
 * request upstream in exec-command.ts, the session's record in exec-record.ts.
 * Upstream is the API server's exec over WebSocket (v5.channel.k8s.io, tty): for tenant pods the
 * tenant's control plane as the user (its RBAC decides `pods/exec`; it reaches the pod through the
 * vn-agent), for super-cluster pods the super cluster (operators only). Every session is a row in
 * exec_sessions (who, where, what, start, end, exit code, bytes) and an audit event; a tenant whose
 * Tenant sets spec.streams.recordTranscripts keeps the session's output too (capped).
 */
import type { IncomingMessage } from "node:http";
import type WebSocket from "ws";
import {
  clientFrame,
  closeCodes,
  type ExecQuery,
  execChannels,
  execQuery,
} from "@/server/core/stream-protocol";
import { errorFromResponse } from "@/server/k8s/errors";
import { execPath, exitFromStatus, shellCommand } from "./exec-command";
import { recordsTranscripts, type SessionRecord, startRecord, transcriptCap } from "./exec-record";
import { createFlow } from "./flow";
import { closeCodeFor, queryStreamEndpoint, type StreamSettings } from "./logs";
import { deleteNodeShell, nodeShellNamespace, openNodeShell } from "./node-shell";
import { podUpstream, requireSuperCluster, streamFailure } from "./sources";
import { closeReasonOf, type StreamContext, type StreamEndpoint, sendError } from "./upgrade";

export function createExecEndpoint(settings: StreamSettings): StreamEndpoint {
  return queryStreamEndpoint(execQuery, "exec", (socket, context, query) =>
    runShell(socket, context, query, settings),
  );
}

function readBody(response: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    response.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size <= 65_536) chunks.push(chunk);
    });
    response.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    response.on("error", () => resolve(Buffer.concat(chunks).toString("utf8")));
  });
}

function runShell(
  socket: WebSocket,
  context: StreamContext,
  query: ExecQuery,
  settings: StreamSettings,
): void {
  const command = shellCommand(query.shell);
  const flow = createFlow(socket, settings.bufferBytes);
  const keepTranscript = recordsTranscripts(query.source === "tenant-pod" ? query.tenant : undefined);
  const transcript: Buffer[] = [];
  let transcriptBytes = 0;
  let bytesIn = 0;
  let bytesOut = 0;
  let exit: { code: number | null; reason: string } | undefined;
  let upstream: WebSocket | undefined;
  let record: SessionRecord | undefined;
  let ended = false;
  let endReason = "closed by the user";

  const idle = () => {
    endReason = "idle";
    sendError(
      socket,
      408,
      `The shell was idle for ${Math.round(settings.idleMs / 1000)} s and was closed. Reconnect to go on.`,
    );
    socket.close(closeCodes.idle, "idle");
  };
  let idleTimer = setTimeout(idle, settings.idleMs);
  idleTimer.unref();
  const touch = () => {
    clearTimeout(idleTimer);
    idleTimer = setTimeout(idle, settings.idleMs);
    idleTimer.unref();
  };
  const maxTimer = setTimeout(() => {
    endReason = "maximum session length";
    sendError(
      socket,
      410,
      `The shell reached the maximum session length (${Math.round(settings.maxSessionMs / 1000)} s).`,
    );
    socket.close(closeCodes.maxDuration, "maximum session length");
  }, settings.maxSessionMs);
  maxTimer.unref();

  let shellPod: string | undefined;
  const abort = new AbortController();
  const finish = () => {
    if (ended) return;
    ended = true;
    abort.abort();
    if (shellPod) {
      const name = shellPod;
      void deleteNodeShell(requireSuperCluster(), name).catch((error: unknown) =>
        context.logger.warn("could not delete a node shell pod (it expires on its own)", {
          pod: name,
          error,
        }),
      );
    }
    clearTimeout(idleTimer);
    clearTimeout(maxTimer);
    flow.stop();
    if (upstream && upstream.readyState !== upstream.CLOSED) upstream.close(1000);
    record?.finish({
      exitCode: exit?.code ?? null,
      reason: exit ? exit.reason : endReason,
      bytesIn,
      bytesOut,
      transcript: keepTranscript ? Buffer.concat(transcript) : undefined,
    });
    context.logger.info("shell session ended", {
      session: record?.id,
      exitCode: exit?.code ?? null,
      reason: exit?.reason ?? endReason,
      bytesIn,
      bytesOut,
    });
  };
  socket.once("close", finish);

  const refuse = (status: number, message: string) => {
    exit ??= { code: null, reason: message };
    sendError(socket, status, message);
    socket.close(closeCodeFor(status), closeReasonOf(message));
  };

  socket.on("message", (data, isBinary) => {
    if (isBinary) {
      const bytes = Buffer.isBuffer(data) ? data : Buffer.concat(data as Buffer[]);
      touch();
      bytesIn += bytes.length;
      if (upstream?.readyState === upstream?.OPEN) {
        upstream?.send(Buffer.concat([Buffer.from([0]), bytes]));
        // A shell that does not read its input must not make Ring0 queue it without bound.
        if ((upstream?.bufferedAmount ?? 0) > settings.bufferBytes) {
          socket.pause();
          const wait = setInterval(() => {
            if (
              !upstream ||
              upstream.readyState !== upstream.OPEN ||
              upstream.bufferedAmount <= settings.bufferBytes / 2
            ) {
              clearInterval(wait);
              socket.resume();
            }
          }, 25);
          wait.unref();
        }
      }
      return;
    }
    let parsed: ReturnType<typeof clientFrame.safeParse> | undefined;
    try {
      parsed = clientFrame.safeParse(JSON.parse(data.toString()));
    } catch {
      parsed = undefined;
    }
    if (!parsed?.success || parsed.data.type !== "resize") {
      sendError(
        socket,
        400,
        'A shell accepts binary frames (keystrokes) and {"type":"resize","cols":…,"rows":…} only.',
      );
      return;
    }
    resize(parsed.data.cols, parsed.data.rows);
  });

  const resize = (cols: number, rows: number) => {
    if (upstream?.readyState !== upstream?.OPEN || !upstream) return;
    upstream.send(
      Buffer.concat([Buffer.from([4]), Buffer.from(JSON.stringify({ Width: cols, Height: rows }))]),
    );
  };

  (async () => {
    let target = query;
    if (query.source === "node-shell") {
      socket.send(
        JSON.stringify({
          type: "status",
          state: "following",
          message: `Starting a shell pod on node ${query.node}…`,
        }),
      );
      shellPod = await openNodeShell(requireSuperCluster(), {
        node: query.node ?? "",
        openedBy: context.user.subject,
        maxSeconds: Math.round(settings.maxSessionMs / 1000),
        extraLabels: settings.superPodLabels,
        image: settings.nodeShellImage,
        signal: abort.signal,
      });
      if (ended) {
        await deleteNodeShell(requireSuperCluster(), shellPod).catch(() => false);
        return;
      }
      target = { ...query, namespace: nodeShellNamespace, pod: shellPod, container: "shell" };
    }
    const api = await podUpstream(target, context.user);
    record = await startRecord(context, target, command);
    if (ended) {
      finish();
      record.finish({ exitCode: null, reason: endReason, bytesIn, bytesOut });
      return;
    }
    const ws = api.webSocket(execPath(target, command), ["v5.channel.k8s.io", "v4.channel.k8s.io"]);
    upstream = ws;
    ws.on("unexpected-response", (_request, response) => {
      void readBody(response).then((body) => {
        const error = errorFromResponse(response.statusCode ?? 502, body);
        refuse(error.status || 502, error.message);
      });
    });
    ws.on("open", () => {
      if (ended) {
        ws.close(1000);
        return;
      }
      flow.attach(ws);
      socket.send(
        JSON.stringify({
          type: "started",
          sessionId: record?.id ?? "",
          shell: query.shell,
          container: query.container ?? "",
        }),
      );
      resize(query.cols, query.rows);
    });
    ws.on("message", (data: Buffer) => {
      if (data.length === 0) return;
      const channel = data[0];
      const payload = data.subarray(1);
      if (channel === execChannels.stdout || channel === execChannels.stderr) {
        touch();
        bytesOut += payload.length;
        if (keepTranscript && transcriptBytes < transcriptCap) {
          const kept = payload.subarray(0, transcriptCap - transcriptBytes);
          transcript.push(Buffer.from(kept));
          transcriptBytes += kept.length;
        }
        flow.send(Buffer.concat([Buffer.from([channel]), payload]));
      } else if (channel === 3) {
        exit = exitFromStatus(payload.toString("utf8"));
      }
    });
    ws.on("close", () => {
      if (ended) return;
      const result = exit ?? { code: null, reason: "the connection to the pod closed" };
      exit = result;
      if (socket.readyState === socket.OPEN) {
        socket.send(JSON.stringify({ type: "exit", code: result.code, reason: result.reason }));
        socket.close(1000, "exited");
      }
    });
    ws.on("error", (error) => {
      if (ended) return;
      const failure = streamFailure(error);
      context.logger.info("shell upstream failed", { error: failure.message });
      if (!exit) refuse(502, `The connection to the pod failed: ${failure.message}`);
    });
  })().catch((error: unknown) => {
    const failure = streamFailure(error);
    context.logger.info("shell refused", { status: failure.status, error: failure.message });
    refuse(failure.status, failure.message);
  });
}
