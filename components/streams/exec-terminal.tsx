"use client";

/**
 * A shell in a pod's container over `/ws/exec`, in xterm.js (loaded in the browser only).
 * Keystrokes go out as binary frames, the terminal's size as resize frames; stdout and stderr
 * come back as binary frames tagged by channel. A shell is not resumed on its own: when it ends
 * (exit code and reason) or the connection drops, the person chooses to reconnect.
 */
import "@xterm/xterm/css/xterm.css";
import type { FitAddon } from "@xterm/addon-fit";
import type { Terminal } from "@xterm/xterm";
import { useCallback, useEffect, useId, useRef, useState } from "react";
import type { ErrorFrame } from "@/components/streams/stream-close";
import { closeOutcome } from "@/components/streams/stream-close";
import { type ExecTarget, execStreamPath, streamUrl } from "@/components/streams/stream-paths";
import styles from "@/components/streams/streams.module.css";
import { useToast } from "@/components/ui/toast";
import { type ExecShell, execShells, type ServerFrame } from "@/server/core/stream-protocol";

type Session =
  | { phase: "idle" }
  | { phase: "connecting" }
  | { phase: "open"; started?: { sessionId: string; shell: string; container: string } }
  | { phase: "exited"; code: number | null; reason: string; started?: { shell: string; container: string } }
  | { phase: "closed"; message: string; tone: "info" | "error" };

const shellLabels: Record<ExecShell, string> = { auto: "Automatic (bash, else sh)", bash: "bash", sh: "sh" };

/** What the exit banner says, e.g. "Shell exited with code 0 (Completed)". */
export function exitText(code: number | null, reason: string): string {
  const how = code === null ? "Shell ended without an exit code" : `Shell exited with code ${code}`;
  return reason ? `${how} (${reason})` : how;
}

async function loadXterm() {
  const [{ Terminal }, { FitAddon }] = await Promise.all([
    import("@xterm/xterm"),
    import("@xterm/addon-fit"),
  ]);
  return { Terminal, FitAddon };
}

export function ExecTerminal({
  target,
  containers,
}: {
  /** Its `container` is ignored: the container select decides. */
  target: ExecTarget;
  /** The pod's containers; the first is chosen by default. */
  containers: readonly string[];
}) {
  const toast = useToast();
  const containerId = useId();
  const shellId = useId();
  const host = useRef<HTMLDivElement>(null);
  const terminal = useRef<{ term: Terminal; fit: FitAddon } | null>(null);
  const socket = useRef<WebSocket | null>(null);
  const [ready, setReady] = useState(false);
  const [container, setContainer] = useState(containers[0] ?? "");
  const [shell, setShell] = useState<ExecShell>("auto");
  const [session, setSession] = useState<Session>({ phase: "idle" });

  const send = useCallback((data: string | Uint8Array) => {
    const open = socket.current;
    if (open && open.readyState === WebSocket.OPEN) open.send(data);
  }, []);

  const paste = useCallback(async () => {
    try {
      const text = await navigator.clipboard.readText();
      terminal.current?.term.paste(text);
    } catch {
      toast("The browser did not allow reading the clipboard; use its paste shortcut instead.", "error");
    }
  }, [toast]);

  const copy = useCallback(async () => {
    const selection = terminal.current?.term.getSelection() ?? "";
    if (!selection) return toast("Select text in the terminal first.");
    try {
      await navigator.clipboard.writeText(selection);
      toast("Copied the selection.");
    } catch {
      toast("The browser did not allow copying to the clipboard.", "error");
    }
  }, [toast]);

  // The terminal lives as long as the component; sessions come and go inside it.
  useEffect(() => {
    let disposed = false;
    let observer: ResizeObserver | undefined;
    void loadXterm().then(({ Terminal, FitAddon }) => {
      if (disposed || !host.current) return;
      const term = new Terminal({
        cursorBlink: true,
        convertEol: false,
        fontFamily: "ui-monospace, SFMono-Regular, Menlo, monospace",
        fontSize: 13,
        scrollback: 5_000,
        theme: { background: "#0f1117" },
      });
      const fit = new FitAddon();
      term.loadAddon(fit);
      term.open(host.current);
      fit.fit();
      const encoder = new TextEncoder();
      term.onData((data) => send(encoder.encode(data)));
      term.onBinary((data) => send(Uint8Array.from(data, (character) => character.charCodeAt(0) & 0xff)));
      term.onResize(({ cols, rows }) => send(JSON.stringify({ type: "resize", cols, rows })));
      // Ctrl+Shift+C / Ctrl+Shift+V copy and paste, as in desktop terminals (Ctrl+C stays an interrupt).
      term.attachCustomKeyEventHandler((event) => {
        if (event.type !== "keydown" || !event.ctrlKey || !event.shiftKey) return true;
        if (event.code === "KeyC") {
          void copy();
          return false;
        }
        if (event.code === "KeyV") {
          void paste();
          return false;
        }
        return true;
      });
      observer = new ResizeObserver(() => {
        try {
          fit.fit();
        } catch {
          // Not laid out (hidden tab).
        }
      });
      observer.observe(host.current);
      terminal.current = { term, fit };
      setReady(true);
    });
    return () => {
      disposed = true;
      observer?.disconnect();
      socket.current?.close(1000, "closed by the viewer");
      socket.current = null;
      terminal.current?.term.dispose();
      terminal.current = null;
    };
  }, [send, copy, paste]);

  const connect = useCallback(() => {
    const loaded = terminal.current;
    if (!loaded) return;
    const previous = socket.current;
    socket.current = null;
    previous?.close(1000, "reconnecting");
    const { term, fit } = loaded;
    term.reset();
    fit.fit();
    const path = execStreamPath({
      ...target,
      container: container || undefined,
      shell,
      cols: term.cols,
      rows: term.rows,
    });
    const ws = new WebSocket(streamUrl(path, window.location));
    ws.binaryType = "arraybuffer";
    socket.current = ws;
    setSession({ phase: "connecting" });
    let opened = false;
    let error: ErrorFrame | undefined;
    let started: { sessionId: string; shell: string; container: string } | undefined;
    let exit: { code: number | null; reason: string } | undefined;

    ws.onopen = () => {
      opened = true;
      setSession({ phase: "open" });
      term.focus();
    };
    ws.onmessage = (event) => {
      if (event.data instanceof ArrayBuffer) {
        // First byte: the channel (stdout or stderr); both go to the screen.
        if (event.data.byteLength > 1) term.write(new Uint8Array(event.data, 1));
        return;
      }
      let frame: ServerFrame;
      try {
        frame = JSON.parse(String(event.data)) as ServerFrame;
      } catch {
        return;
      }
      if (frame.type === "started") {
        started = { sessionId: frame.sessionId, shell: frame.shell, container: frame.container };
        setSession({ phase: "open", started });
      } else if (frame.type === "exit") {
        exit = { code: frame.code, reason: frame.reason };
        setSession({ phase: "exited", ...exit, started });
      } else if (frame.type === "error") {
        error = { status: frame.status, message: frame.message };
      }
    };
    ws.onclose = (event) => {
      if (socket.current !== ws) return;
      socket.current = null;
      if (exit) return;
      const outcome = closeOutcome(event.code, event.reason, { error, opened, subject: "shell" });
      setSession({ phase: "closed", message: outcome.message, tone: outcome.tone });
    };
  }, [target, container, shell]);

  const live = session.phase === "open" || session.phase === "connecting";
  return (
    <div className={styles.panel}>
      <div className={styles.toolbar}>
        {containers.length > 0 ? (
          <span className="field">
            <label htmlFor={containerId}>Container</label>
            <select
              id={containerId}
              value={container}
              disabled={live}
              onChange={(event) => setContainer(event.target.value)}
            >
              {containers.map((name) => (
                <option key={name} value={name}>
                  {name}
                </option>
              ))}
            </select>
          </span>
        ) : null}
        <span className="field">
          <label htmlFor={shellId}>Shell</label>
          <select
            id={shellId}
            value={shell}
            disabled={live}
            onChange={(event) => setShell(event.target.value as ExecShell)}
          >
            {execShells.map((name) => (
              <option key={name} value={name}>
                {shellLabels[name]}
              </option>
            ))}
          </select>
        </span>
        {live ? (
          <button
            type="button"
            className="button"
            onClick={() => socket.current?.close(1000, "disconnected by the viewer")}
          >
            Disconnect
          </button>
        ) : (
          <button type="button" className="button button-primary" disabled={!ready} onClick={connect}>
            {session.phase === "idle" ? "Connect" : "Reconnect"}
          </button>
        )}
        <span className={styles.spacer} />
        <button type="button" className="button" onClick={() => void copy()} disabled={!ready}>
          Copy
        </button>
        <button type="button" className="button" onClick={() => void paste()} disabled={!live}>
          Paste
        </button>
      </div>
      <SessionBanner session={session} />
      <div ref={host} className={styles.terminal} data-testid="exec-terminal" data-phase={session.phase} />
    </div>
  );
}

function SessionBanner({ session }: { session: Session }) {
  switch (session.phase) {
    case "idle":
      return (
        <p className={styles.statusbar} role="status">
          Not connected. A shell session is recorded in the audit log.
        </p>
      );
    case "connecting":
      return (
        <p className={styles.statusbar} role="status">
          <span className="status-dot" data-state="connecting" />
          Connecting…
        </p>
      );
    case "open":
      return (
        <p className={styles.statusbar} role="status" data-testid="exec-started">
          <span className="status-dot" data-state="live" />
          {session.started
            ? `Connected: ${session.started.shell} in container ${session.started.container} (session ${session.started.sessionId})`
            : "Connected, starting the shell…"}
        </p>
      );
    case "exited":
      return (
        <p
          className={`alert ${session.code === 0 ? "alert-info" : "alert-error"}`}
          role="status"
          data-testid="exec-exit"
        >
          {exitText(session.code, session.reason)}
        </p>
      );
    case "closed":
      return (
        <p className={`alert ${session.tone === "error" ? "alert-error" : "alert-info"}`} role="alert">
          {session.message}
        </p>
      );
  }
}
