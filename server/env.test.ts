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

  it("validates the isolation policy, naming the bad field", () => {
    expect(parseEnv({ RING0_ISOLATION_POLICY: '{"disabled":["hostPort"]}' }).RING0_ISOLATION_POLICY).toBe(
      '{"disabled":["hostPort"]}',
    );
    expect(() => parseEnv({ RING0_ISOLATION_POLICY: '{"disabled":["hostpid"]}' })).toThrowError(
      /RING0_ISOLATION_POLICY — .*disabled\[0\]/,
    );
    expect(() => parseEnv({ RING0_ISOLATION_POLICY: "{not json" })).toThrowError(
      /RING0_ISOLATION_POLICY — .*not valid JSON/,
    );
  });

  it("takes the webhooks' Service with its port and the pod's address, and says what is missing", () => {
    const env = parseEnv({
      RING0_WEBHOOK_SERVICE: "ring0-webhooks",
      RING0_WEBHOOK_PORT: "9443",
      RING0_POD_IP: "10.244.0.9",
      RING0_NAMESPACE: "ring0-system",
    });
    expect(env).toMatchObject({ RING0_WEBHOOK_SERVICE: "ring0-webhooks", RING0_WEBHOOK_PORT: 9443 });
    expect(() => parseEnv({ RING0_WEBHOOK_SERVICE: "ring0-webhooks" })).toThrowError(
      /RING0_WEBHOOK_PORT — required when RING0_WEBHOOK_SERVICE is set[\s\S]*RING0_POD_IP — required when RING0_WEBHOOK_SERVICE is set/,
    );
    expect(() => parseEnv({ RING0_POD_IP: "not-an-ip" })).toThrowError(
      /RING0_POD_IP — expected the pod's IP address/,
    );
    expect(() => parseEnv({ RING0_WEBHOOK_PORT: "9443" })).toThrowError(
      /RING0_WEBHOOK_PORT — only used with RING0_WEBHOOK_SERVICE/,
    );
    expect(() =>
      parseEnv({
        RING0_WEBHOOK_SERVICE: "ring0-webhooks",
        RING0_WEBHOOK_PORT: "3000",
        RING0_POD_IP: "10.244.0.9",
      }),
    ).toThrowError(/RING0_WEBHOOK_PORT — expected a port other than PORT and RING0_GATEWAY_PORT/);
    expect(() => parseEnv({ RING0_WEBHOOK_SERVICE: "Ring0_Webhooks" })).toThrowError(
      /RING0_WEBHOOK_SERVICE — expected a Service name/,
    );
  });

  it("takes the vn-agent DaemonSet's port in a cluster only", () => {
    expect(parseEnv({ RING0_SUPER_CLUSTER: "in-cluster", RING0_VN_AGENT_PORT: "10550" })).toMatchObject({
      RING0_VN_AGENT_PORT: 10550,
    });
    expect(() => parseEnv({ RING0_VN_AGENT_PORT: "10550" })).toThrowError(
      /RING0_VN_AGENT_PORT — only used with RING0_SUPER_CLUSTER=in-cluster/,
    );
    expect(() => parseEnv({ RING0_SUPER_CLUSTER: "in-cluster", RING0_VN_AGENT_PORT: "0" })).toThrowError(
      /RING0_VN_AGENT_PORT/,
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

  it("listens on loopback unless told an address, and refuses a name or a port", () => {
    expect(parseEnv({}).RING0_LISTEN_ADDRESS).toBe("127.0.0.1");
    expect(parseEnv({ RING0_LISTEN_ADDRESS: "0.0.0.0" }).RING0_LISTEN_ADDRESS).toBe("0.0.0.0");
    expect(parseEnv({ RING0_LISTEN_ADDRESS: "::" }).RING0_LISTEN_ADDRESS).toBe("::");
    for (const bad of ["localhost", "0.0.0.0:3000", "10.0.0"]) {
      expect(() => parseEnv({ RING0_LISTEN_ADDRESS: bad })).toThrowError(
        /^Invalid configuration: RING0_LISTEN_ADDRESS — expected an IP address to listen on, e\.g\. 127\.0\.0\.1 or 0\.0\.0\.0/,
      );
    }
  });

  it("takes an etcd volume size and class for control planes in pods, and names a bad one", () => {
    expect(parseEnv({}).RING0_ETCD_STORAGE_SIZE).toBeUndefined();
    const env = parseEnv({ RING0_ETCD_STORAGE_SIZE: "2Gi", RING0_ETCD_STORAGE_CLASS: "fast-ssd" });
    expect([env.RING0_ETCD_STORAGE_SIZE, env.RING0_ETCD_STORAGE_CLASS]).toEqual(["2Gi", "fast-ssd"]);
    for (const bad of ["two", "0", "-1Gi", "1m", "1e3"]) {
      expect(() => parseEnv({ RING0_ETCD_STORAGE_SIZE: bad })).toThrowError(
        /RING0_ETCD_STORAGE_SIZE — expected the size of each control plane's etcd volume, e\.g\. 2Gi/,
      );
    }
    expect(() => parseEnv({ RING0_ETCD_STORAGE_CLASS: "Fast SSD" })).toThrowError(
      /RING0_ETCD_STORAGE_CLASS — expected a StorageClass name/,
    );
  });

  it("tunes control planes' GOGC, 25 unless told, and names a value out of range", () => {
    expect(parseEnv({}).RING0_CONTROL_PLANE_GOGC).toBe(25);
    expect(parseEnv({ RING0_CONTROL_PLANE_GOGC: "100" }).RING0_CONTROL_PLANE_GOGC).toBe(100);
    expect(() => parseEnv({ RING0_CONTROL_PLANE_GOGC: "5" })).toThrowError(
      /RING0_CONTROL_PLANE_GOGC — expected at least 10/,
    );
    expect(() => parseEnv({ RING0_CONTROL_PLANE_GOGC: "off" })).toThrowError(
      /RING0_CONTROL_PLANE_GOGC — expected a whole number from 10 to 400/,
    );
    for (const bad of ["2.5e1", "0x19", "25.0", "1000"])
      expect(() => parseEnv({ RING0_CONTROL_PLANE_GOGC: bad })).toThrowError(
        /RING0_CONTROL_PLANE_GOGC — expected a whole number from 10 to 400/,
      );
    expect(parseEnv({ RING0_CONTROL_PLANE_GOGC: "" }).RING0_CONTROL_PLANE_GOGC).toBe(25);
  });

  it("takes the tenant network's wall settings, and names a bad range", () => {
    const env = parseEnv({
      RING0_POD_CIDRS: "10.244.0.0/16, 10.0.0.0/24",
      RING0_POD_EGRESS_BLOCK: "10.0.0.7",
      RING0_POD_EGRESS_ALLOW: "169.254.20.10/32",
    });
    expect(env.RING0_TENANT_BOUNDARY).toBe("auto");
    expect(env.RING0_POD_CIDRS).toBe("10.244.0.0/16, 10.0.0.0/24");
    expect(() => parseEnv({ RING0_TENANT_BOUNDARY: "yes" })).toThrowError(
      /RING0_TENANT_BOUNDARY — expected "auto"/,
    );
    expect(() => parseEnv({ RING0_POD_CIDRS: "10.244.0.0/16,10.300.0.0/16" })).toThrowError(
      /RING0_POD_CIDRS — "10\.300\.0\.0\/16" is not an address range/,
    );
    expect(() => parseEnv({ RING0_POD_EGRESS_BLOCK: "::ffff:169.254.0.0/112" })).toThrowError(
      /RING0_POD_EGRESS_BLOCK — .*IPv4-mapped IPv6 range: write the IPv4 range itself/,
    );
  });

  it("treats empty strings as unset", () => {
    expect(parseEnv({ DATABASE_URL: "", OIDC_ISSUER: "" }).OIDC_ISSUER).toBeUndefined();
  });

  it("serves the kube gateway on https://localhost:3443 unless told otherwise", () => {
    const defaults = parseEnv({});
    expect(defaults.RING0_GATEWAY_PORT).toBe(3443);
    expect(defaults.gatewayUrl).toBe("https://localhost:3443");
    expect(defaults.RING0_GATEWAY_TLS_CERT).toBeUndefined();
    expect(parseEnv({ RING0_GATEWAY_PORT: "8443" }).gatewayUrl).toBe("https://localhost:8443");
    const proxied = parseEnv({ RING0_GATEWAY_URL: " https://ring0.example.com/ " });
    expect(proxied.gatewayUrl).toBe("https://ring0.example.com");
    expect(parseEnv({ RING0_GATEWAY_URL: "" }).gatewayUrl).toBe("https://localhost:3443");
    const files = parseEnv({
      RING0_GATEWAY_TLS_CERT: "/etc/ring0/tls.crt",
      RING0_GATEWAY_TLS_KEY: "/etc/ring0/tls.key",
    });
    expect(files).toMatchObject({
      RING0_GATEWAY_TLS_CERT: "/etc/ring0/tls.crt",
      RING0_GATEWAY_TLS_KEY: "/etc/ring0/tls.key",
    });
  });

  it("names bad kube gateway settings", () => {
    expect(() => parseEnv({ RING0_GATEWAY_PORT: "0" })).toThrowError(
      /^Invalid configuration: RING0_GATEWAY_PORT — expected a port between 1 and 65535 \(got "0"\)\.$/,
    );
    expect(() => parseEnv({ RING0_GATEWAY_PORT: "3000" })).toThrowError(
      /RING0_GATEWAY_PORT — expected a port other than PORT \(got "3000"\)/,
    );
    expect(() => parseEnv({ RING0_GATEWAY_URL: "http://ring0.example.com" })).toThrowError(
      /^Invalid configuration: RING0_GATEWAY_URL — expected an https:\/\/ URL \(kubectl sends tokens only over TLS\) \(got "http:\/\/ring0.example.com"\)\.$/,
    );
    expect(() => parseEnv({ RING0_GATEWAY_URL: "ring0.example.com" })).toThrowError(
      /RING0_GATEWAY_URL — expected an absolute URL such as https:\/\/ring0.example.com/,
    );
    expect(() => parseEnv({ RING0_GATEWAY_URL: "https://ring0.example.com/?x=1" })).toThrowError(
      /RING0_GATEWAY_URL — expected a base URL without query or fragment/,
    );
    expect(() => parseEnv({ RING0_GATEWAY_TLS_CERT: "/etc/ring0/tls.crt" })).toThrowError(
      /^Invalid configuration: RING0_GATEWAY_TLS_KEY — required when RING0_GATEWAY_TLS_CERT is set \(unset\)\.$/,
    );
    expect(() => parseEnv({ RING0_GATEWAY_TLS_KEY: "/etc/ring0/tls.key" })).toThrowError(
      /RING0_GATEWAY_TLS_CERT — required when RING0_GATEWAY_TLS_KEY is set/,
    );
  });
});
