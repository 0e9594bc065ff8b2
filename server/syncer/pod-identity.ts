/**
 * A tenant pod's identity below (issue 18, pure): the pod reaches its own tenant's API server with
 * its own tenant's service-account token, as a kubelet of the tenant's would give it. Seed 002's
 * syncer (and vcluster's) do the same:
 *
 *   - Every service-account token source of the pod's projected volumes (kube-api-access-* and any
 *     the tenant wrote) becomes an item of one Secret below, its "identity secret", which the syncer
 *     fills with tokens the tenant's API server issues for that pod (TokenRequest, bound to the
 *     tenant's pod, with the source's audience and expiry) and refreshes before they expire.
 *   - The tenant's root CA (`kube-root-ca.crt`, which the super cluster fills with its own CA in
 *     every namespace below) is read from the identity secret too, wherever the pod names it.
 *   - `KUBERNETES_SERVICE_HOST`/`_PORT` (and the rest of the `kubernetes` Service's variables) name
 *     the address where the tenant's pods reach its API server; the kubelet below would otherwise
 *     give every container the super cluster's.
 *
 * No token of the super cluster is ever mounted (`automountServiceAccountToken: false` below).
 */
import type { Json } from "./synced-kinds";

/** Where a tenant's own pods reach its API server, and the CA of that server's certificate. */
export interface PodApi {
  host: string;
  port: number;
  /** PEM. */
  ca: string;
}

/**
 * The identity secret of a tenant pod below: one per pod incarnation (the tenant pod's UID). Tenant
 * secrets with this prefix are never copied down (synced-kinds.ts), so a tenant cannot name one.
 */
export const IDENTITY_SECRET_PREFIX = "ring0-identity-";
/** The key of the tenant's root CA in an identity secret. */
export const IDENTITY_CA_KEY = "ca.crt";
/** The tenant's root CA config map, which every namespace of a cluster has. */
export const ROOT_CA_CONFIG_MAP = "kube-root-ca.crt";
/** A projected token's lifetime when the pod does not say (the kubelet's default). */
export const DEFAULT_TOKEN_SECONDS = 3600;
/** The shortest lifetime Kubernetes accepts for a projected token. */
export const MIN_TOKEN_SECONDS = 600;
/** The most token sources one pod may hold (each is a TokenRequest to the tenant's API server). */
export const MAX_TOKEN_SOURCES = 16;
/** A token is renewed once this share of its lifetime has passed (the kubelet's rule). */
const REFRESH_SHARE = 0.8;
/** …and at least once a day, whatever the lifetime (the kubelet's rule too). */
const MAX_REFRESH_MS = 24 * 3600 * 1000;

export function identitySecretName(podUid: string): string {
  return `${IDENTITY_SECRET_PREFIX}${podUid}`;
}

/** One token the identity secret holds: a projected source of the pod's. */
export interface TokenSource {
  /** Its key in the identity secret. */
  key: string;
  audience?: string;
  expirationSeconds: number;
}

function projectedSources(volume: Json): Json[] | undefined {
  const sources = (volume?.projected as Json | undefined)?.sources;
  return Array.isArray(sources) ? (sources as Json[]) : undefined;
}

function tokenKey(volume: string, index: number): string {
  return `token.${volume}.${index}`;
}

/** The tokens a pod's spec asks for, one per service-account token source. */
export function tokenSources(spec: Json): TokenSource[] {
  const found: TokenSource[] = [];
  for (const volume of (spec.volumes as Json[] | undefined) ?? []) {
    projectedSources(volume)?.forEach((source, index) => {
      const token = source?.serviceAccountToken as Json | undefined;
      if (!token) return;
      const seconds = Number(token.expirationSeconds ?? DEFAULT_TOKEN_SECONDS);
      found.push({
        key: tokenKey(String(volume.name), index),
        ...(typeof token.audience === "string" && token.audience !== "" ? { audience: token.audience } : {}),
        expirationSeconds:
          Number.isFinite(seconds) && seconds >= MIN_TOKEN_SECONDS ? seconds : DEFAULT_TOKEN_SECONDS,
      });
    });
  }
  return found;
}

function namesRootCa(reference: unknown): boolean {
  return Boolean(
    reference && typeof reference === "object" && (reference as Json).name === ROOT_CA_CONFIG_MAP,
  );
}

const rootCaItems = [{ key: IDENTITY_CA_KEY, path: IDENTITY_CA_KEY }];

function containersOf(spec: Json): Json[] {
  return ["containers", "initContainers", "ephemeralContainers"].flatMap(
    (field) => (spec[field] as Json[] | undefined) ?? [],
  );
}

/** Whether the pod needs an identity secret below: it holds a token or reads the tenant's root CA. */
export function needsIdentity(spec: Json): boolean {
  if (tokenSources(spec).length > 0) return true;
  for (const volume of (spec.volumes as Json[] | undefined) ?? []) {
    if (namesRootCa(volume?.configMap)) return true;
    if (projectedSources(volume)?.some((source) => namesRootCa(source?.configMap))) return true;
  }
  return containersOf(spec).some(
    (container) =>
      (container.env as Json[] | undefined)?.some((variable) =>
        namesRootCa((variable?.valueFrom as Json | undefined)?.configMapKeyRef),
      ) || (container.envFrom as Json[] | undefined)?.some((source) => namesRootCa(source?.configMapRef)),
  );
}

/** A projected volume's sources read from the identity secret instead. */
function identitySources(volume: Json, secret: string): Json[] | undefined {
  const sources = projectedSources(volume);
  return sources?.map((source, index) => {
    const token = source?.serviceAccountToken as Json | undefined;
    if (token) {
      const path = typeof token.path === "string" ? token.path : "token";
      return { secret: { name: secret, items: [{ key: tokenKey(String(volume.name), index), path }] } };
    }
    const configMap = source?.configMap as Json | undefined;
    if (namesRootCa(configMap)) {
      return { secret: { ...configMap, name: secret, items: configMap?.items ?? rootCaItems } };
    }
    return source;
  });
}

function withIdentityVolumes(volumes: Json[], secret: string): Json[] {
  return volumes.map((volume) => {
    const sources = identitySources(volume, secret);
    if (sources) return { ...volume, projected: { ...(volume.projected as Json), sources } };
    const configMap = volume.configMap as Json | undefined;
    if (namesRootCa(configMap)) {
      const { configMap: _dropped, ...rest } = volume;
      const { name: _name, ...options } = configMap as Json;
      return { ...rest, secret: { ...options, secretName: secret, items: options.items ?? rootCaItems } };
    }
    return volume;
  });
}

/** The variables of the `kubernetes` Service the kubelet gives every container, for `api`. */
export function kubernetesServiceEnv(api: Pick<PodApi, "host" | "port">): Json[] {
  const address = `tcp://${api.host}:${api.port}`;
  const port = String(api.port);
  const variables: [string, string][] = [
    ["KUBERNETES_SERVICE_HOST", api.host],
    ["KUBERNETES_SERVICE_PORT", port],
    ["KUBERNETES_SERVICE_PORT_HTTPS", port],
    ["KUBERNETES_PORT", address],
  ];
  // The kubelet below names the super cluster's `kubernetes` Service by its port, 443: those
  // names are always overridden, so none of the super cluster's addresses reaches a container.
  for (const servicePort of new Set([443, api.port])) {
    const prefix = `KUBERNETES_PORT_${servicePort}_TCP`;
    variables.push(
      [prefix, address],
      [`${prefix}_PROTO`, "tcp"],
      [`${prefix}_PORT`, port],
      [`${prefix}_ADDR`, api.host],
    );
  }
  return variables.map(([name, value]) => ({ name, value }));
}

function withIdentityEnv(container: Json, secret: string, api: PodApi): Json {
  const own = (container.env as Json[] | undefined) ?? [];
  const named = new Set(own.map((variable) => variable?.name));
  const env = own.map((variable) => {
    const ref = (variable?.valueFrom as Json | undefined)?.configMapKeyRef as Json | undefined;
    if (!namesRootCa(ref)) return variable;
    const { configMapKeyRef: _dropped, ...valueFrom } = variable.valueFrom as Json;
    return { ...variable, valueFrom: { ...valueFrom, secretKeyRef: { ...ref, name: secret } } };
  });
  // envFrom of the root CA map gives one variable, `<prefix>ca.crt`: never the secret's tokens.
  const fromRootCa: Json[] = [];
  const envFrom = (container.envFrom as Json[] | undefined)?.filter((source) => {
    const ref = source?.configMapRef as Json | undefined;
    if (!namesRootCa(ref)) return true;
    fromRootCa.push({
      name: `${typeof source.prefix === "string" ? source.prefix : ""}${IDENTITY_CA_KEY}`,
      valueFrom: {
        secretKeyRef: {
          name: secret,
          key: IDENTITY_CA_KEY,
          ...(ref?.optional !== undefined ? { optional: ref.optional } : {}),
        },
      },
    });
    return false;
  });
  // Explicit variables beat the kubelet's service variables, and the container's own beat these.
  const service = kubernetesServiceEnv(api).filter((variable) => !named.has(variable.name));
  const { envFrom: _own, ...rest } = container;
  return {
    ...rest,
    env: [...service, ...fromRootCa, ...env],
    ...(envFrom && envFrom.length > 0 ? { envFrom } : {}),
  };
}

/**
 * The pod's spec with its identity read from its identity secret `secret` and its containers
 * pointed at `api` (applied to a spec already translated for below, token volumes kept).
 */
export function withPodIdentity(spec: Json, secret: string, api: PodApi): Json {
  const copy: Json = { ...spec };
  if (Array.isArray(copy.volumes)) copy.volumes = withIdentityVolumes(copy.volumes as Json[], secret);
  for (const field of ["containers", "initContainers", "ephemeralContainers"]) {
    const containers = copy[field];
    if (Array.isArray(containers)) {
      copy[field] = containers.map((container: Json) => withIdentityEnv(container, secret, api));
    }
  }
  return copy;
}

/** The TokenRequest the tenant's API server is sent for one token of a pod. */
export function tokenRequest(source: TokenSource, pod: { name: string; uid: string }): Json {
  return {
    apiVersion: "authentication.k8s.io/v1",
    kind: "TokenRequest",
    spec: {
      audiences: source.audience ? [source.audience] : [],
      expirationSeconds: source.expirationSeconds,
      boundObjectRef: { apiVersion: "v1", kind: "Pod", name: pod.name, uid: pod.uid },
    },
  };
}

/**
 * When tokens issued at `issuedAt` (ms) for `sources` are due for renewal: once 80% of the
 * shortest lifetime has passed (`grantedSeconds`: the lifetimes the API server granted, which may
 * be shorter than asked), and at least daily (so a secret with only the CA follows a new one).
 */
/**
 * Whether a service-account token (a JWT the tenant's API server issued) names a node with its uid,
 * as a kubelet's token does. The API server reads the node from its watch cache, so a token asked
 * for right after the vNode was made may name the node without its uid.
 */
export function tokenNamesNode(token: string): boolean {
  const payload = token.split(".")[1];
  if (!payload) return false;
  try {
    const claims = JSON.parse(Buffer.from(payload, "base64url").toString("utf8")) as {
      "kubernetes.io"?: { node?: { name?: unknown; uid?: unknown } };
    };
    const node = claims["kubernetes.io"]?.node;
    return (
      typeof node?.name === "string" && node.name !== "" && typeof node.uid === "string" && node.uid !== ""
    );
  } catch {
    return false;
  }
}

export function refreshDue(issuedAt: number, sources: TokenSource[], grantedSeconds: number[] = []): number {
  const lifetimes = [...sources.map((source) => source.expirationSeconds), ...grantedSeconds].filter(
    (seconds) => Number.isFinite(seconds) && seconds > 0,
  );
  const shortest = lifetimes.length > 0 ? Math.min(...lifetimes) * 1000 * REFRESH_SHARE : MAX_REFRESH_MS;
  return issuedAt + Math.min(shortest, MAX_REFRESH_MS);
}

/** Names of secrets a pod's spec reads (volumes, projected sources, env and envFrom). */
function secretNames(spec: Json): string[] {
  const names: unknown[] = [];
  for (const volume of (spec.volumes as Json[] | undefined) ?? []) {
    names.push((volume?.secret as Json | undefined)?.secretName);
    for (const source of projectedSources(volume) ?? [])
      names.push((source?.secret as Json | undefined)?.name);
  }
  for (const container of containersOf(spec)) {
    for (const variable of (container.env as Json[] | undefined) ?? []) {
      names.push(((variable?.valueFrom as Json | undefined)?.secretKeyRef as Json | undefined)?.name);
    }
    for (const source of (container.envFrom as Json[] | undefined) ?? []) {
      names.push((source?.secretRef as Json | undefined)?.name);
    }
  }
  return names.filter((name): name is string => typeof name === "string");
}

/**
 * Why the syncer refuses this pod's identity as written, or null: it names a Ring0 identity secret
 * itself (another pod's tokens, under its own service account's name), or holds more tokens than
 * one pod may.
 */
export function identityRefusal(spec: Json): string | null {
  const named = secretNames(spec).find((name) => name.startsWith(IDENTITY_SECRET_PREFIX));
  if (named) {
    return `The pod reads secret ${named}; names starting with ${IDENTITY_SECRET_PREFIX} are Ring0's (each pod's own tokens), so rename that secret.`;
  }
  const tokens = tokenSources(spec).length;
  if (tokens > MAX_TOKEN_SOURCES) {
    return `The pod asks for ${tokens} service-account tokens; a pod may hold at most ${MAX_TOKEN_SOURCES}.`;
  }
  return null;
}
