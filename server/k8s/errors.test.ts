import { describe, expect, it } from "vitest";
import { isConflict, isGone, isNotFound, K8sError, toK8sError } from "./errors";

describe("toK8sError", () => {
  it("converts an ApiException with a Status body string", () => {
    const apiException = Object.assign(new Error("HTTP-Code: 404"), {
      code: 404,
      body: JSON.stringify({
        kind: "Status",
        status: "Failure",
        message: 'configmaps "x" not found',
        reason: "NotFound",
        details: { name: "x", kind: "configmaps" },
        code: 404,
      }),
    });
    const error = toK8sError(apiException);
    expect(error).toMatchObject({ status: 404, reason: "NotFound", message: 'configmaps "x" not found' });
    expect(error.details).toEqual({ name: "x", kind: "configmaps" });
    expect(isNotFound(error)).toBe(true);
  });

  it("derives the reason from the status when the body is not a Status", () => {
    const error = toK8sError({ code: 409, body: "conflict!" });
    expect(error).toMatchObject({ status: 409, reason: "Conflict", message: "conflict!" });
    expect(isConflict(error)).toBe(true);
  });

  it("converts watch ERROR Status objects, including 410", () => {
    const error = toK8sError({
      kind: "Status",
      code: 410,
      reason: "Expired",
      message: "too old resource version: 1 (42)",
    });
    expect(error).toMatchObject({ status: 410, reason: "Expired" });
    expect(isGone(error)).toBe(true);
  });

  it("turns connection failures into Unreachable naming the server", () => {
    const failure = new TypeError("fetch failed", { cause: { code: "ECONNREFUSED" } });
    const error = toK8sError(failure, "https://127.0.0.1:6443");
    expect(error).toMatchObject({ status: 0, reason: "Unreachable" });
    expect(error.message).toBe("Kubernetes API server https://127.0.0.1:6443 is unreachable (ECONNREFUSED)");
  });

  it("keeps K8sErrors and wraps anything else", () => {
    const original = new K8sError({ status: 403, reason: "Forbidden", message: "no" });
    expect(toK8sError(original)).toBe(original);
    expect(toK8sError("weird")).toMatchObject({ reason: "Unknown", message: "weird" });
  });
});
