import { describe, expect, it } from "vitest";
import { parseQuantity } from "@/server/core/quantity";
import { quotaWebhookManifest } from "./registration";

const endpoint = { baseUrl: "https://127.0.0.1:9443", caBundle: "PEM" };

function rulesOf(manifest: ReturnType<typeof quotaWebhookManifest>) {
  const webhooks = (
    manifest as unknown as { webhooks: { rules: { resources: string[]; operations: string[] }[] }[] }
  ).webhooks;
  return webhooks[0]!.rules.map((rule) => `${rule.resources.join(",")}:${rule.operations.join(",")}`);
}

describe("quotaWebhookManifest", () => {
  it("registers the limited kinds, ResourceQuotas, and namespace creates even when namespaces are not limited", () => {
    expect(rulesOf(quotaWebhookManifest({ "requests.cpu": parseQuantity("2") }, endpoint))).toEqual([
      "pods:CREATE",
      "pods/resize:UPDATE",
      "namespaces:CREATE",
      "resourcequotas:CREATE,UPDATE",
    ]);
  });

  it("registers namespace creates once when namespaces are limited", () => {
    expect(rulesOf(quotaWebhookManifest({ namespaces: parseQuantity("3") }, endpoint))).toEqual([
      "namespaces:CREATE",
      "resourcequotas:CREATE,UPDATE",
    ]);
  });
});
