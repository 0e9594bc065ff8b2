import { isIP } from "node:net";
import path from "node:path";
import { z } from "zod";
import { parseTrafficAllowances } from "@/server/cluster/real-node/traffic-allowances";
import { parseCidrList } from "@/server/core/cidr";
import { processSlot } from "@/server/core/process-slots";
import { DEFAULT_CONTROL_PLANE_GOGC } from "@/server/provisioners/go-runtime";
import { parseEgressAllowances } from "@/server/provisioners/local/egress-allowances";
import { parseSharingPolicy } from "@/server/sharing/policy-schema";
import { parseIsolationPolicy } from "@/server/syncer/isolation-schema";

/**
 * Ring0's configuration, validated once per process. A bad value stops start-up with one line
 * naming the variable and what it expects (see `.env.example` for every variable).
 */
const port = z.coerce
  .number({ error: "expected a TCP port number" })
  .int("expected a whole number")
  .min(1, "expected a port between 1 and 65535")
  .max(65535, "expected a port between 1 and 65535");

const optionalUrl = z
  .string()
  .trim()
  .optional()
  .transform((value) => (value ? value : undefined))
  .pipe(z.url({ error: "expected an absolute URL such as https://iam.example.com/realms/ring0" }).optional());

/** The public https base URL kubectl reaches the kube gateway at (no query, no fragment). */
const gatewayUrl = z
  .string()
  .trim()
  .optional()
  .transform((value) => (value ? value.replace(/\/+$/, "") : undefined))
  .pipe(
    z
      .url({ error: "expected an absolute URL such as https://ring0.example.com" })
      .refine(
        (url) => url.startsWith("https://"),
        "expected an https:// URL (kubectl sends tokens only over TLS)",
      )
      .refine((url) => !/[?#]/.test(url), "expected a base URL without query or fragment")
      .optional(),
  );

const optionalFile = z
  .string()
  .trim()
  .optional()
  .transform((value) => (value ? value : undefined));

const claimName = z
  .string()
  .regex(/^[A-Za-z0-9_:./-]{1,100}$/, "expected a claim name of letters, digits and _:./-")
  .default("tenant");

const schema = z
  .object({
    NODE_ENV: z.enum(["development", "production", "test"]).default("development"),
    LOG_LEVEL: z.enum(["debug", "info", "warn", "error"]).default("info"),
    PORT: port.default(3000),
    /**
     * The address the panel (PORT) and the kube gateway (RING0_GATEWAY_PORT) listen on: loopback by
     * default; 0.0.0.0 (or ::) inside a pod, where a Service in front decides who reaches them.
     */
    RING0_LISTEN_ADDRESS: z
      .string()
      .refine((value) => isIP(value) !== 0, "expected an IP address to listen on, e.g. 127.0.0.1 or 0.0.0.0")
      .default("127.0.0.1"),
    RING0_STATE_DIR: z.string().min(1).default(".ring0"),
    NEXTAUTH_URL: z.url({ error: "expected the public URL of Ring0, e.g. http://localhost:3000" }).optional(),
    NEXTAUTH_SECRET: z.string().min(32, "expected at least 32 characters of random secret").optional(),
    DATABASE_URL: z
      .string()
      .trim()
      .optional()
      .transform((value) => (value ? value : undefined))
      .pipe(
        z
          .string()
          .regex(/^postgres(ql)?:\/\//, "expected a postgresql:// connection URL")
          .optional(),
      ),
    EMBEDDED_POSTGRES_PORT: port.default(54329),
    OIDC_ISSUER: optionalUrl,
    OIDC_CLIENT_ID: z.string().optional(),
    OIDC_CLIENT_SECRET: z.string().optional(),
    OIDC_DISPLAY_NAME: z.string().min(1).max(60).default("Ring0 IAM"),
    OIDC_SCOPES: z.string().default("openid profile email ring0"),
    OIDC_TENANT_CLAIM: claimName.default("tenant"),
    OIDC_ROLES_CLAIM: claimName.default("roles"),
    RING0_OPERATOR_TENANT: z
      .string()
      .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, "expected a tenant name (lowercase DNS label)")
      .default("system"),
    IAM_PORT: port.default(3001),
    SUPER_KUBECONFIG: z
      .string()
      .trim()
      .optional()
      .transform((value) => (value ? value : undefined)),
    RING0_SUPER_CLUSTER: z
      .enum(["local", "in-cluster", "off"], {
        error:
          'expected "local" (start the local super cluster), "in-cluster" (the cluster Ring0\'s pod runs in, through its service account) or "off"',
      })
      .default("local"),
    RING0_SUPER_CLUSTER_NODES: z.coerce
      .number({ error: "expected a number of nodes" })
      .int("expected a whole number")
      .min(0, "expected 0 to 1000 nodes")
      .max(1000, "expected 0 to 1000 nodes")
      .default(3),
    RING0_REAL_NODES: z
      .enum(["auto", "0", "1", "2", "3", "4", "5", "6", "7", "8"], {
        error: 'expected "auto" (one real node where this host can run it) or a number from 0 to 8',
      })
      .default("auto"),
    IAM_ACCOUNTS_FILE: z.string().min(1).default("server/iam/seed-accounts.json"),
    RING0_ALLOWED_ORIGINS: z.string().optional(),
    RING0_WS_MAX_PAYLOAD: z.coerce.number().int().min(1024).max(16_777_216).default(65_536),
    RING0_STREAMS_PER_USER: z.coerce
      .number({ error: "expected a number of streams" })
      .int("expected a whole number")
      .min(1, "expected at least 1")
      .max(10_000, "expected at most 10000")
      .default(16),
    RING0_STREAMS_PER_TENANT: z.coerce
      .number({ error: "expected a number of streams" })
      .int("expected a whole number")
      .min(1, "expected at least 1")
      .max(100_000, "expected at most 100000")
      .default(128),
    RING0_STREAM_IDLE_SECONDS: z.coerce
      .number({ error: "expected seconds" })
      .int("expected a whole number of seconds")
      .min(10, "expected at least 10 seconds")
      .max(86_400, "expected at most 86400 seconds (a day)")
      .default(1_800),
    RING0_STREAM_MAX_SECONDS: z.coerce
      .number({ error: "expected seconds" })
      .int("expected a whole number of seconds")
      .min(60, "expected at least 60 seconds")
      .max(604_800, "expected at most 604800 seconds (a week)")
      .default(43_200),
    RING0_NODE_SHELL_IMAGE: z
      .string()
      .trim()
      .max(512, "expected an image reference of at most 512 characters")
      .regex(/^[a-z0-9][a-z0-9._\-/:@]*$/i, "expected an image reference, e.g. busybox:1.37")
      .optional(),
    RING0_STREAM_BUFFER_BYTES: z.coerce
      .number({ error: "expected bytes" })
      .int("expected a whole number of bytes")
      .min(16_384, "expected at least 16384 bytes")
      .max(268_435_456, "expected at most 268435456 bytes")
      .default(1_048_576),
    RING0_QUOTA_SAMPLE_SECONDS: z.coerce
      .number({ error: "expected seconds" })
      .int("expected a whole number of seconds")
      .min(10, "expected at least 10 seconds")
      .max(86_400, "expected at most 86400 seconds (a day)")
      .default(60),
    RING0_QUOTA_RETENTION_DAYS: z.coerce
      .number({ error: "expected days" })
      .int("expected a whole number of days")
      .min(1, "expected at least 1 day")
      .max(3_650, "expected at most 3650 days (ten years)")
      .default(30),
    RING0_DEFAULT_PROVISIONER: z
      .enum(["local", "kubernetes"], {
        error: 'expected "local" (processes on this host) or "kubernetes" (pods in the super cluster)',
      })
      .default("local"),
    RING0_ETCD_STORAGE_SIZE: z
      .string()
      .trim()
      .optional()
      .transform((value) => (value ? value : undefined))
      // The Tenant CRD's pattern for spec.controlPlane.storage.size (a claim size, e.g. 2Gi).
      .refine((value) => value === undefined || /^[1-9][0-9]*(\.[0-9]+)?([KMGTPE]i|[kMGTPE])?$/.test(value), {
        error:
          "expected the size of each control plane's etcd volume, e.g. 2Gi (or nothing: an emptyDir, lost with its pod)",
      }),
    RING0_ETCD_STORAGE_CLASS: z
      .string()
      .trim()
      .optional()
      .transform((value) => (value ? value : undefined))
      .refine((value) => value === undefined || /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/.test(value), {
        error:
          "expected a StorageClass name (lowercase letters, digits, '-' and '.'), or nothing for the default class",
      }),
    RING0_TENANT_EGRESS_ALLOW: z
      .string()
      .trim()
      .optional()
      .transform((value) => (value ? value : undefined)),
    RING0_CONTROL_PLANE_GOGC: z
      .string()
      .trim()
      .optional()
      .transform((value, context) => {
        if (!value) return DEFAULT_CONTROL_PLANE_GOGC;
        const gogc = /^\d{1,4}$/.test(value) ? Number(value) : Number.NaN;
        if (!Number.isNaN(gogc) && gogc >= 10 && gogc <= 400) return gogc;
        context.addIssue({
          code: "custom",
          message:
            gogc < 10
              ? "expected at least 10: lower makes the control planes collect garbage continuously"
              : "expected a whole number from 10 to 400 (Go's GOGC; 100 is Go's own default)",
        });
        return z.NEVER;
      }),
    RING0_TENANT_BOUNDARY: z
      .enum(["auto", "on", "off"], {
        error:
          'expected "auto" (NetworkPolicies keep tenants\' pods apart wherever this host\'s wall does not), "on" or "off"',
      })
      .default("auto"),
    RING0_POD_CIDRS: z
      .string()
      .trim()
      .optional()
      .transform((value) => (value ? value : undefined)),
    RING0_POD_EGRESS_BLOCK: z
      .string()
      .trim()
      .optional()
      .transform((value) => (value ? value : undefined)),
    RING0_POD_EGRESS_ALLOW: z
      .string()
      .trim()
      .optional()
      .transform((value) => (value ? value : undefined)),
    RING0_TENANT_TRAFFIC_ALLOW: z
      .string()
      .trim()
      .optional()
      .transform((value) => (value ? value : undefined)),
    RING0_ISOLATION_POLICY: z
      .string()
      .trim()
      .optional()
      .transform((value) => (value ? value : undefined)),
    RING0_SHARING_POLICY: z
      .string()
      .trim()
      .optional()
      .transform((value) => (value ? value : undefined)),
    RING0_SEED_TENANTS: z
      .enum(["on", "off"], {
        error: 'expected "on" (create the embedded IAM\'s demo tenants at start) or "off"',
      })
      .default("on"),
    RING0_GATEWAY_RATE: z.coerce
      .number({ error: "expected requests per second" })
      .positive("expected a positive number of requests per second")
      .max(100_000, "expected at most 100000 requests per second")
      .default(100),
    RING0_GATEWAY_BURST: z.coerce
      .number({ error: "expected a number of requests" })
      .int("expected a whole number")
      .min(1, "expected at least 1 request")
      .max(100_000, "expected at most 100000 requests")
      .default(500),
    RING0_GATEWAY_MAX_LONG_RUNNING: z.coerce
      .number({ error: "expected a number of concurrent requests" })
      .int("expected a whole number")
      .min(1, "expected at least 1")
      .max(10_000, "expected at most 10000")
      .default(250),
    RING0_GATEWAY_AUTH_FAILURES: z.coerce
      .number({ error: "expected a number of failed authentications a minute" })
      .int("expected a whole number")
      .min(1, "expected at least 1")
      .max(100_000, "expected at most 100000")
      .default(30),
    RING0_TRPC_MAX_BODY_BYTES: z.coerce
      .number({ error: "expected bytes" })
      .int("expected a whole number of bytes")
      .min(16_384, "expected at least 16384 bytes")
      .max(67_108_864, "expected at most 67108864 bytes (64 MiB)")
      .default(1_048_576),
    RING0_GATEWAY_PORT: port.default(3443),
    RING0_GATEWAY_URL: gatewayUrl,
    RING0_GATEWAY_TLS_CERT: optionalFile,
    RING0_GATEWAY_TLS_KEY: optionalFile,
    /**
     * Ring0 in a cluster: the Service in front of every replica's admission webhooks (its port named
     * "webhooks"), in Ring0's namespace. Tenant API servers in pods call the webhooks at its cluster
     * IP, and its names join the webhooks' certificate. The chart sets it.
     */
    RING0_WEBHOOK_SERVICE: z
      .string()
      .trim()
      .optional()
      .transform((value) => (value ? value : undefined))
      .refine((value) => value === undefined || /^[a-z]([-a-z0-9]{0,61}[a-z0-9])?$/.test(value), {
        error: "expected a Service name (lowercase letters, digits and '-', at most 63)",
      }),
    /**
     * The webhooks' port with RING0_WEBHOOK_SERVICE (the chart's 9443, the one port of Ring0's pods
     * the local world's tenant wall opens to API servers in pods). Without it, the webhooks take a
     * free port, kept in the state dir across restarts.
     */
    RING0_WEBHOOK_PORT: port.optional(),
    /** Ring0's own namespace in the super cluster (the chart's downward API; default: its service account's). */
    RING0_NAMESPACE: z
      .string()
      .trim()
      .optional()
      .transform((value) => (value ? value : undefined))
      .refine((value) => value === undefined || /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/.test(value), {
        error: "expected a namespace name (lowercase letters, digits and '-', at most 63)",
      }),
    /**
     * Ring0 in a cluster with the chart's vn-agent DaemonSet: the port every agent pod serves on.
     * Ring0 then issues each agent pod's serving certificate and points vNodes at the agent pods
     * instead of running agents in its own process (whose loopback no API server in a pod reaches).
     */
    RING0_VN_AGENT_PORT: port.optional(),
    /** This replica's pod address (the chart's downward API): the webhooks listen there too. */
    RING0_POD_IP: z
      .string()
      .trim()
      .optional()
      .transform((value) => (value ? value : undefined))
      .refine((value) => value === undefined || isIP(value) !== 0, {
        error: "expected the pod's IP address",
      }),
  })
  .superRefine((env, ctx) => {
    // Settings in a language of their own: each parser's error names what to fix.
    const parsed: [keyof typeof env, string | undefined, (text: string) => unknown][] = [
      ["RING0_TENANT_EGRESS_ALLOW", env.RING0_TENANT_EGRESS_ALLOW, parseEgressAllowances],
      ["RING0_TENANT_TRAFFIC_ALLOW", env.RING0_TENANT_TRAFFIC_ALLOW, parseTrafficAllowances],
      ["RING0_POD_CIDRS", env.RING0_POD_CIDRS, parseCidrList],
      ["RING0_POD_EGRESS_BLOCK", env.RING0_POD_EGRESS_BLOCK, parseCidrList],
      ["RING0_POD_EGRESS_ALLOW", env.RING0_POD_EGRESS_ALLOW, parseCidrList],
      ["RING0_ISOLATION_POLICY", env.RING0_ISOLATION_POLICY, parseIsolationPolicy],
      ["RING0_SHARING_POLICY", env.RING0_SHARING_POLICY, parseSharingPolicy],
    ];
    for (const [field, text, parse] of parsed) {
      if (!text) continue;
      try {
        parse(text);
      } catch (error) {
        ctx.addIssue({
          code: "custom",
          path: [field],
          message: error instanceof Error ? error.message : String(error),
        });
      }
    }
    if (Boolean(env.RING0_GATEWAY_TLS_CERT) !== Boolean(env.RING0_GATEWAY_TLS_KEY)) {
      const missing = env.RING0_GATEWAY_TLS_CERT ? "RING0_GATEWAY_TLS_KEY" : "RING0_GATEWAY_TLS_CERT";
      const other = env.RING0_GATEWAY_TLS_CERT ? "RING0_GATEWAY_TLS_CERT" : "RING0_GATEWAY_TLS_KEY";
      ctx.addIssue({ code: "custom", path: [missing], message: `required when ${other} is set` });
    }
    for (const needed of ["RING0_WEBHOOK_PORT", "RING0_POD_IP"] as const) {
      if (env.RING0_WEBHOOK_SERVICE && !env[needed])
        ctx.addIssue({
          code: "custom",
          path: [needed],
          message: "required when RING0_WEBHOOK_SERVICE is set",
        });
      // Read only with the Service: said, never silently ignored.
      if (!env.RING0_WEBHOOK_SERVICE && env[needed])
        ctx.addIssue({
          code: "custom",
          path: [needed],
          message: "only used with RING0_WEBHOOK_SERVICE (Ring0 in a cluster): set it too, or unset this",
        });
    }
    if (env.RING0_WEBHOOK_PORT && [env.PORT, env.RING0_GATEWAY_PORT].includes(env.RING0_WEBHOOK_PORT)) {
      ctx.addIssue({
        code: "custom",
        path: ["RING0_WEBHOOK_PORT"],
        message: "expected a port other than PORT and RING0_GATEWAY_PORT",
      });
    }
    if (env.RING0_VN_AGENT_PORT && env.RING0_SUPER_CLUSTER !== "in-cluster") {
      ctx.addIssue({
        code: "custom",
        path: ["RING0_VN_AGENT_PORT"],
        message:
          "only used with RING0_SUPER_CLUSTER=in-cluster (the chart's vn-agent DaemonSet): set that too, or unset this",
      });
    }
    if (env.PORT === env.RING0_GATEWAY_PORT) {
      ctx.addIssue({
        code: "custom",
        path: ["RING0_GATEWAY_PORT"],
        message: "expected a port other than PORT",
      });
    }
    if (env.OIDC_ISSUER && !env.OIDC_CLIENT_ID) {
      ctx.addIssue({ code: "custom", path: ["OIDC_CLIENT_ID"], message: "required when OIDC_ISSUER is set" });
    }
    if (env.OIDC_ISSUER && !env.OIDC_CLIENT_SECRET) {
      ctx.addIssue({
        code: "custom",
        path: ["OIDC_CLIENT_SECRET"],
        message: "required when OIDC_ISSUER is set",
      });
    }
  });

export type Env = z.infer<typeof schema> & {
  /** The origin browsers use to reach Ring0. */
  publicUrl: string;
  /** Absolute state directory (embedded PostgreSQL data, IAM keys, generated secrets, lock file). */
  stateDir: string;
  allowedOrigins: string[];
  /** The base URL kubeconfigs point kubectl at (RING0_GATEWAY_URL, else https://localhost:<RING0_GATEWAY_PORT>). */
  gatewayUrl: string;
};

export class ConfigError extends Error {
  override name = "ConfigError";
}

/** Parses an environment; throws ConfigError whose message is one line per bad variable. */
export function parseEnv(source: Record<string, string | undefined>): Env {
  const result = schema.safeParse(source);
  if (!result.success) {
    const lines = result.error.issues.map((issue) => {
      const variable = issue.path.join(".") || "environment";
      const given = source[variable];
      const shown = given === undefined ? "unset" : `got ${JSON.stringify(redact(variable, given))}`;
      return `Invalid configuration: ${variable} — ${issue.message} (${shown}).`;
    });
    throw new ConfigError(lines.join("\n"));
  }
  const env = result.data;
  const publicUrl = (env.NEXTAUTH_URL ?? `http://localhost:${env.PORT}`).replace(/\/$/, "");
  const allowedOrigins = (env.RING0_ALLOWED_ORIGINS ?? new URL(publicUrl).origin)
    .split(",")
    .map((origin) => origin.trim())
    .filter(Boolean);
  for (const origin of allowedOrigins) {
    if (!URL.canParse(origin) || new URL(origin).origin !== origin) {
      throw new ConfigError(
        `Invalid configuration: RING0_ALLOWED_ORIGINS — expected comma-separated origins like https://ring0.example.com (got ${JSON.stringify(origin)}).`,
      );
    }
  }
  const gatewayUrl = env.RING0_GATEWAY_URL ?? `https://localhost:${env.RING0_GATEWAY_PORT}`;
  return { ...env, publicUrl, stateDir: path.resolve(env.RING0_STATE_DIR), allowedOrigins, gatewayUrl };
}

function redact(variable: string, value: string): string {
  return /SECRET|PASSWORD|DATABASE_URL/.test(variable) ? "<redacted>" : value;
}

const cache = processSlot<{ source: string; env: Env }>("env");

/** The current process's configuration; re-parsed if the runtime changed process.env since. */
export function env(): Env {
  const key = JSON.stringify([
    process.env.NODE_ENV,
    process.env.NEXTAUTH_URL,
    process.env.NEXTAUTH_SECRET,
    process.env.DATABASE_URL,
    process.env.OIDC_ISSUER,
    process.env.OIDC_CLIENT_ID,
    process.env.PORT,
    process.env.RING0_STATE_DIR,
    process.env.RING0_ALLOWED_ORIGINS,
    process.env.RING0_GATEWAY_PORT,
    process.env.RING0_GATEWAY_URL,
  ]);
  let parsed = cache.get();
  if (parsed?.source !== key) {
    parsed = { source: key, env: parseEnv(process.env) };
    cache.set(parsed);
  }
  return parsed.env;
}
