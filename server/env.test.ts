import { describe, expect, it } from "vitest";
import { ConfigError, parseEnv } from "./env";

describe("parseEnv", () => {
  it("gives working embedded defaults", () => {
    const env = parseEnv({});
    expect(env.PORT).toBe(3000);
    expect(env.publicUrl).toBe("http://localhost:3000");
    expect(env.allowedOrigins).toEqual(["http://localhost:3000"]);
    expect(env.OIDC_ISSUER).toBeUndefined();
    expect(env.DATABASE_URL).toBeUndefined();
  });

  it("names the variable and what it expects", () => {
    expect(() => parseEnv({ PORT: "eighty" })).toThrowError(
      /^Invalid configuration: PORT — expected a TCP port number/,
    );
    expect(() => parseEnv({ PORT: "70000" })).toThrowError(
      /PORT — expected a port between 1 and 65535 \(got "70000"\)/,
    );
    expect(() => parseEnv({ DATABASE_URL: "mysql://x" })).toThrowError(
      /DATABASE_URL — expected a postgresql:\/\/ connection URL \(got "<redacted>"\)/,
    );
  });

  it("requires a client id and secret with an external issuer, one line each", () => {
    try {
      parseEnv({ OIDC_ISSUER: "https://iam.example.com" });
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as Error).message.split("\n")).toEqual([
        "Invalid configuration: OIDC_CLIENT_ID — required when OIDC_ISSUER is set (unset).",
        "Invalid configuration: OIDC_CLIENT_SECRET — required when OIDC_ISSUER is set (unset).",
      ]);
    }
  });

  it("rejects allowed origins that are not bare origins", () => {
    expect(() => parseEnv({ RING0_ALLOWED_ORIGINS: "https://a.example/path" })).toThrowError(
      /RING0_ALLOWED_ORIGINS/,
    );
    expect(
      parseEnv({ RING0_ALLOWED_ORIGINS: "https://a.example, http://localhost:3000" }).allowedOrigins,
    ).toEqual(["https://a.example", "http://localhost:3000"]);
  });

  it("treats empty strings as unset", () => {
    expect(parseEnv({ DATABASE_URL: "", OIDC_ISSUER: "" }).OIDC_ISSUER).toBeUndefined();
  });
});
