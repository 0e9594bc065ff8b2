/** The operators' sharing policy in force: RING0_SHARING_POLICY (JSON), validated at start. */
import { env } from "@/server/env";
import { parseSharingPolicy, type SharingPolicyConfig } from "./policy";

let cached: { text: string | undefined; policy: SharingPolicyConfig } | undefined;

export function sharingPolicy(): SharingPolicyConfig {
  const text = env().RING0_SHARING_POLICY;
  if (!cached || cached.text !== text) cached = { text, policy: parseSharingPolicy(text) };
  return cached.policy;
}
