import { describe, expect, it } from "vitest";
import { isIdentityMountWait, withImageHint } from "./reconcile-events";

const notFound =
  'Failed to pull image "nginx": rpc error: code = NotFound desc = failed to pull and unpack image "docker.io/library/nginx:latest": failed to resolve reference "docker.io/library/nginx:latest": docker.io/library/nginx:latest: not found';

describe("an image pull failure copied up to the tenant", () => {
  it("says the image is not in Ring0's registry and how an operator supplies it", () => {
    const message = withImageHint(notFound) as string;
    expect(message.startsWith(notFound)).toBe(true);
    expect(message).toContain(`Ring0's local registry, which does not have "nginx"`);
    expect(message).toContain("./ring0 images push <archive>");
    expect(message).toContain("docker save nginx");
  });

  it("leaves every other message alone", () => {
    for (const message of [
      'Successfully pulled image "nginx" in 1.2s',
      'Back-off pulling image "nginx"',
      'Failed to pull image "x": unauthorized: authentication required',
      "Error: ErrImagePull",
      undefined,
      42,
    ])
      expect(withImageHint(message)).toBe(message);
  });

  it("stays within the API's 1024-character message limit", () => {
    const long = `${notFound} ${"x".repeat(2000)}`;
    const message = withImageHint(long) as string;
    expect(message.length).toBeLessThanOrEqual(1024);
    expect(message).toContain("./ring0 images push");
    // An image name too long to leave room for the original: the message is left as it was.
    const huge = `Failed to pull image "${"a".repeat(1000)}": not found`;
    expect(withImageHint(huge)).toBe(huge);
  });
});

describe("the kubelet's wait for a pod's identity secret", () => {
  it("stays below; other mount failures go up", () => {
    const waiting = {
      reason: "FailedMount",
      message:
        'MountVolume.SetUp failed for volume "kube-api-access-x7k2p" : secret "ring0-identity-3f1c9a2e-0d4b-4f7e-9d1a-5a8c2b7e6f10" not found',
    };
    expect(isIdentityMountWait(waiting)).toBe(true);
    // A variable read from the root CA waits for the same secret.
    expect(
      isIdentityMountWait({
        reason: "Failed",
        message: 'Error: secret "ring0-identity-3f1c9a2e-0d4b-4f7e-9d1a-5a8c2b7e6f10" not found',
      }),
    ).toBe(true);
    expect(isIdentityMountWait({ reason: "Pulled", message: 'Container image "x" already present' })).toBe(
      false,
    );
    expect(
      isIdentityMountWait({
        reason: "FailedMount",
        message: 'MountVolume.SetUp failed for volume "data" : secret "app-secret" not found',
      }),
    ).toBe(false);
    expect(isIdentityMountWait({ reason: "FailedMount" })).toBe(false);
  });
});
