/**
 * `withTenant`: a real tenant for one test — a Tenant object provisioned by Ring0's controller into
 * its own control plane, with an admin and a member account in the embedded IAM — removed (control
 * plane, tokens, accounts' access) when the test ends. Everything goes through Ring0's own API as
 * the operator, exactly as the console does.
 */
import { randomBytes } from "node:crypto";
import { type APIRequestContext, expect } from "@playwright/test";
import { e2eOrigin } from "./ports";

export interface TenantAccount {
  username: string;
  password: string;
}

export interface ProvisionedTenant {
  name: string;
  displayName: string;
  admin: TenantAccount;
  member: TenantAccount;
}

export interface WithTenantOptions {
  /** Default: a unique `e2e-<random>` name. */
  name?: string;
  displayName?: string;
  /** Wait for phase Ready (default true). */
  ready?: boolean;
  provisioner?: "local" | "kubernetes";
}

/** tRPC over HTTP as the browser sends it (superjson envelope, same-origin: `origin` is Ring0's). */
export async function trpcCall<T>(
  request: APIRequestContext,
  procedure: string,
  input: unknown,
  kind: "query" | "mutation",
  origin = e2eOrigin,
): Promise<{ status: number; data?: T; message?: string }> {
  const headers = { origin };
  const response =
    kind === "query"
      ? await request.get(
          `/api/trpc/${procedure}?input=${encodeURIComponent(JSON.stringify({ json: input }))}`,
          {
            headers,
          },
        )
      : await request.post(`/api/trpc/${procedure}`, { data: { json: input }, headers });
  const body = (await response.json().catch(() => ({}))) as {
    result?: { data?: { json?: T } };
    error?: { json?: { message?: string } };
  };
  return { status: response.status(), data: body.result?.data?.json, message: body.error?.json?.message };
}

/** A tenant's phase as the console reads it; null once it is gone (404). */
export async function phaseOf(
  request: APIRequestContext,
  name: string,
  origin = e2eOrigin,
): Promise<string | null> {
  const got = await trpcCall<{ summary?: { phase?: string }; phase?: string }>(
    request,
    "tenants.get",
    { name },
    "query",
    origin,
  );
  if (got.status === 404) return null;
  return got.data?.summary?.phase ?? got.data?.phase ?? "Unknown";
}

/** Deletes a tenant and waits until the Tenant object (and so its control plane) is gone. */
export async function removeTenant(request: APIRequestContext, name: string): Promise<void> {
  await trpcCall(request, "tenants.delete", { name, confirm: name }, "mutation");
  await expect
    .poll(() => phaseOf(request, name), { timeout: 90_000, message: `tenant ${name} to be deleted` })
    .toBeNull();
}

export async function provisionTenant(
  request: APIRequestContext,
  options: WithTenantOptions = {},
): Promise<ProvisionedTenant> {
  const name = options.name ?? `e2e-${randomBytes(3).toString("hex")}`;
  const displayName = options.displayName ?? `E2E ${name}`;
  const created = await trpcCall<{ firstAdmin: { username: string; temporaryPassword: string } | null }>(
    request,
    "tenants.create",
    {
      name,
      displayName,
      version: "1.36",
      provisioner: options.provisioner ?? "local",
      admins: [],
      firstAdmin: { username: `${name}-admin`, name: `Admin of ${name}`, email: `admin@${name}.example` },
    },
    "mutation",
  );
  expect(created.status, created.message).toBe(200);
  const admin = created.data?.firstAdmin;
  if (!admin) throw new Error(`tenants.create returned no first admin for ${name}`);

  const member = await trpcCall<{ account: { username: string }; temporaryPassword: string }>(
    request,
    "accounts.create",
    {
      tenant: name,
      username: `${name}-member`,
      name: `Member of ${name}`,
      email: `member@${name}.example`,
      role: "tenant-member",
    },
    "mutation",
  );
  expect(member.status, member.message).toBe(200);
  if (!member.data) throw new Error(`accounts.create returned nothing for ${name}`);

  if (options.ready !== false) {
    await expect
      .poll(() => phaseOf(request, name), { timeout: 120_000, message: `tenant ${name} to become Ready` })
      .toBe("Ready");
  }
  return {
    name,
    displayName,
    admin: { username: admin.username, password: admin.temporaryPassword },
    member: { username: member.data.account.username, password: member.data.temporaryPassword },
  };
}
