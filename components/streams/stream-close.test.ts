import { describe, expect, it } from "vitest";
import { closeOutcome, reconnectDelay } from "@/components/streams/stream-close";
import { closeCodes } from "@/server/core/stream-protocol";

describe("closeOutcome", () => {
  const logs = { opened: true, subject: "logs" } as const;

  it("never retries a refusal, and says why with the server's message", () => {
    for (const code of [
      closeCodes.badRequest,
      closeCodes.sessionEnded,
      closeCodes.forbidden,
      closeCodes.notFound,
      closeCodes.tooMany,
    ]) {
      const outcome = closeOutcome(code, "", {
        ...logs,
        error: { status: code - 4000, message: "the reason" },
      });
      expect(outcome.retry, `code ${code}`).toBe(false);
      expect(outcome.tone).toBe("error");
      expect(outcome.message).toContain("the reason.");
    }
    expect(closeOutcome(closeCodes.sessionEnded, "", logs).message).toMatch(
      /session has ended.*Sign in again/,
    );
    expect(closeOutcome(closeCodes.forbidden, "", logs).message).toMatch(/may not read these logs/);
    expect(closeOutcome(closeCodes.forbidden, "", { opened: true, subject: "shell" }).message).toMatch(
      /may not open a shell/,
    );
    expect(closeOutcome(closeCodes.tooMany, "", logs).message).toMatch(/Too many open streams/);
  });

  it("retries network drops and upstream failures", () => {
    for (const code of [1006, 1001, 1011, closeCodes.upstream, closeCodes.unavailable])
      expect(closeOutcome(code, "", logs).retry, `code ${code}`).toBe(true);
    expect(closeOutcome(1006, "", { opened: false, subject: "logs" }).message).toMatch(/Could not open/);
  });

  it("does not retry idle and maximum-duration closes, but invites a reconnect", () => {
    expect(closeOutcome(closeCodes.idle, "", logs)).toMatchObject({ retry: false, tone: "info" });
    expect(closeOutcome(closeCodes.maxDuration, "", logs).message).toMatch(/Reconnect/);
  });

  it("tells an ended stream from a server close", () => {
    expect(closeOutcome(1000, "", { ...logs, ended: true })).toMatchObject({ retry: false, tone: "info" });
    expect(closeOutcome(1000, "log ended", { ...logs, ended: true }).message).toBe("The log stream ended.");
    expect(
      closeOutcome(1000, "log ended", {
        ...logs,
        ended: true,
        endMessage: "The log ended (the container stopped).",
      }).message,
    ).toBe("The log ended (the container stopped).");
    expect(closeOutcome(1000, "bye", logs).message).toBe("The server closed the log stream: bye.");
    expect(closeOutcome(1000, "", { opened: true, subject: "shell" }).message).toMatch(
      /shell session closed/,
    );
  });

  it("prefers the error frame's message to the close reason, and does not double the full stop", () => {
    expect(
      closeOutcome(closeCodes.notFound, "reason", {
        ...logs,
        error: { status: 404, message: "pod web not found." },
      }).message,
    ).toBe("Not found: pod web not found.");
    expect(closeOutcome(closeCodes.notFound, "reason", logs).message).toBe("Not found: reason.");
  });

  it("treats unknown 44xx codes as refusals and others as retryable", () => {
    expect(closeOutcome(4418, "", logs).retry).toBe(false);
    expect(closeOutcome(4599, "", logs).retry).toBe(true);
  });
});

describe("reconnectDelay", () => {
  it("doubles up to a cap, with jitter between half and all of it", () => {
    expect(reconnectDelay(0, () => 1)).toBe(500);
    expect(reconnectDelay(0, () => 0)).toBe(250);
    expect(reconnectDelay(3, () => 1)).toBe(4_000);
    expect(reconnectDelay(20, () => 1)).toBe(30_000);
    expect(reconnectDelay(20, () => 0)).toBe(15_000);
  });
});
