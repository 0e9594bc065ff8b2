/**
 * Kubernetes quantities (resource.Quantity) as exact integers of nano-units, so that sums and
 * comparisons of quota usage are exact: 1 = 1e-9 of a unit (core, byte or object), the smallest
 * amount a Quantity can hold. Parsing follows apimachinery's ParseQuantity, including its rounding
 * up of anything finer than a nano and its ceiling of 2^63-1 units, and is stricter about input a
 * person may have mistyped (see parseQuantity).
 */

/** Nano-units in one unit (one core, one byte, one object). */
export const NANO_PER_UNIT = 1_000_000_000n;

/** The largest quantity Kubernetes represents (apimachinery caps at 2^63-1 units), in nano-units. */
export const MAX_QUANTITY_NANO = (2n ** 63n - 1n) * NANO_PER_UNIT;

/** Longer input is refused outright: no real quantity needs more (2^63-1 has 19 digits). */
export const MAX_QUANTITY_LENGTH = 64;

/** How a quantity is rendered: cores, bytes, or a count of objects. */
export type QuantityKind = "cpu" | "memory" | "count";

const VALID_EXAMPLES = "a number with an optional suffix, e.g. 500m, 2, 0.5, 1.5Gi, 128Mi, 100M or 1e3";

/** A text that is not a Kubernetes quantity (or not one allowed here); the message says why and what works. */
export class QuantityError extends Error {
  constructor(
    readonly input: string,
    readonly reason: string,
  ) {
    super(`${JSON.stringify(input)} is not a valid quantity: ${reason}; use ${VALID_EXAMPLES}`);
    this.name = "QuantityError";
  }
}

/** Decimal SI suffixes as powers of ten. */
const DECIMAL_SUFFIXES: Record<string, number> = {
  n: -9,
  u: -6,
  m: -3,
  "": 0,
  k: 3,
  M: 6,
  G: 9,
  T: 12,
  P: 15,
  E: 18,
};

/** Binary SI suffixes as powers of two. */
const BINARY_SUFFIXES: Record<string, number> = { Ki: 10, Mi: 20, Gi: 30, Ti: 40, Pi: 50, Ei: 60 };

/** Suffixes people type that Kubernetes does not know, with what they probably meant. */
const SUFFIX_HINTS: Record<string, string> = {
  K: "k (1000) or Ki (1024)",
  Kb: "k (1000) or Ki (1024)",
  KB: "k (1000) or Ki (1024)",
  KiB: "Ki",
  MB: "M (10^6) or Mi (2^20)",
  MiB: "Mi",
  GB: "G (10^9) or Gi (2^30)",
  GiB: "Gi",
  TB: "T (10^12) or Ti (2^40)",
  TiB: "Ti",
  mi: "Mi (2^20 bytes) or m (1/1000)",
  gi: "Gi",
  ki: "Ki",
  g: "G or Gi",
  b: "no suffix for bytes",
  B: "no suffix for bytes",
};

const NUMBER = /^([+-]?)(\d*)(?:\.(\d*))?/;
const EXPONENT = /^[eE]([+-]?\d+)$/;

export interface ParseQuantityOptions {
  /** Accept a leading "-" (quotas and requests are never negative, so off by default). */
  allowNegative?: boolean;
}

/**
 * An exact Kubernetes quantity as nano-units. The grammar is resource.Quantity's:
 * `[+-]digits[.digits]` followed by a decimal SI suffix (n u m k M G T P E, or none), a binary
 * suffix (Ki Mi Gi Ti Pi Ei) or a decimal exponent (`e3`, `E-2`). Amounts finer than a nano are
 * rounded up (away from zero), as Kubernetes does "so that a request for some resource gets some".
 *
 * Stricter than ParseQuantity where that reads a typo as zero or caps silently: a sign or a dot
 * without digits ("+", "."), surrounding whitespace, more than 64 characters and amounts above
 * Kubernetes' maximum (2^63-1 units) all throw QuantityError.
 */
export function parseQuantity(text: string, options: ParseQuantityOptions = {}): bigint {
  if (typeof text !== "string") throw new QuantityError(String(text), "it is not text");
  if (text.length === 0) throw new QuantityError(text, "it is empty");
  if (text.length > MAX_QUANTITY_LENGTH) {
    throw new QuantityError(
      `${text.slice(0, 20)}…`,
      `it is ${text.length} characters long (at most ${MAX_QUANTITY_LENGTH})`,
    );
  }
  if (/\s/.test(text)) throw new QuantityError(text, "it contains whitespace");

  const number = NUMBER.exec(text);
  const [matched, sign = "", whole = "", fraction] = number ?? [];
  if (!matched || (whole.length === 0 && (fraction ?? "").length === 0)) {
    throw new QuantityError(text, "it does not start with a number");
  }
  const suffix = text.slice(matched.length);

  let powerOfTen = 0;
  let powerOfTwo = 0;
  const exponent = EXPONENT.exec(suffix);
  if (Object.hasOwn(DECIMAL_SUFFIXES, suffix)) powerOfTen = DECIMAL_SUFFIXES[suffix]!;
  else if (Object.hasOwn(BINARY_SUFFIXES, suffix)) powerOfTwo = BINARY_SUFFIXES[suffix]!;
  else if (exponent) {
    const value = Number(exponent[1]);
    // Beyond ±1000 the answer is known without computing 10^n: the cap, or the smallest amount.
    powerOfTen = Math.max(-1000, Math.min(1000, value));
  } else throw new QuantityError(text, suffixProblem(suffix));

  const digits = BigInt(`${whole}${fraction ?? ""}` || "0");
  const negative = sign === "-" && digits !== 0n;
  if (negative && !options.allowNegative) throw new QuantityError(text, "it is negative");

  // value = digits × 2^powerOfTwo × 10^(powerOfTen − fraction digits), in units; ×10^9 for nanos.
  let magnitude = digits << BigInt(powerOfTwo);
  const scale = powerOfTen - (fraction ?? "").length + 9;
  if (scale >= 0) {
    magnitude *= 10n ** BigInt(scale);
  } else {
    const divisor = 10n ** BigInt(-scale);
    magnitude = magnitude / divisor + (magnitude % divisor === 0n ? 0n : 1n);
  }
  if (magnitude > MAX_QUANTITY_NANO) {
    throw new QuantityError(text, "it is larger than Kubernetes' maximum quantity (9223372036854775807)");
  }
  return negative ? -magnitude : magnitude;
}

function suffixProblem(suffix: string): string {
  if (suffix.startsWith(".")) return "it has more than one decimal point";
  if (/^[eE][+-]?$/.test(suffix)) return `the exponent "${suffix}" has no digits`;
  if (/^[eE][+-]?\d*\./.test(suffix)) return "a decimal exponent must be a whole number";
  const hint = Object.hasOwn(SUFFIX_HINTS, suffix) ? SUFFIX_HINTS[suffix] : undefined;
  if (hint) return `the suffix "${suffix}" is not a Kubernetes suffix (use ${hint})`;
  return `the suffix "${suffix}" is not one of n u m k M G T P E, Ki Mi Gi Ti Pi Ei or an exponent like e3`;
}

/** Whether a text is a quantity parseQuantity accepts. */
export function isQuantity(text: string, options: ParseQuantityOptions = {}): boolean {
  try {
    parseQuantity(text, options);
    return true;
  } catch (error) {
    if (error instanceof QuantityError) return false;
    throw error;
  }
}

/** -1, 0 or 1 as a is below, equal to or above b (texts are parsed, negatives allowed). */
export function compareQuantity(a: bigint | string, b: bigint | string): -1 | 0 | 1 {
  const left = typeof a === "string" ? parseQuantity(a, { allowNegative: true }) : a;
  const right = typeof b === "string" ? parseQuantity(b, { allowNegative: true }) : b;
  return left < right ? -1 : left > right ? 1 : 0;
}

/** The larger of two amounts. */
export function maxQuantity(a: bigint, b: bigint): bigint {
  return a > b ? a : b;
}

/** Nano-units rounded away from zero to whole units (Kubernetes' RoundUp(0), used for PVC storage). */
export function roundUpToUnits(nano: bigint): bigint {
  const remainder = nano % NANO_PER_UNIT;
  if (remainder === 0n) return nano;
  return nano - remainder + (nano > 0n ? NANO_PER_UNIT : -NANO_PER_UNIT);
}

/** Units as a JavaScript number, for charts and ratios (not exact beyond 2^53 nano-units). */
export function quantityToNumber(nano: bigint): number {
  const whole = nano / NANO_PER_UNIT;
  return Number(whole) + Number(nano - whole * NANO_PER_UNIT) / 1e9;
}

const BINARY_RENDERING: [string, bigint][] = [
  ["Ei", 2n ** 60n],
  ["Pi", 2n ** 50n],
  ["Ti", 2n ** 40n],
  ["Gi", 2n ** 30n],
  ["Mi", 2n ** 20n],
  ["Ki", 2n ** 10n],
];

const DECIMAL_RENDERING: [string, bigint][] = [
  ["E", 10n ** 18n],
  ["P", 10n ** 15n],
  ["T", 10n ** 12n],
  ["G", 10n ** 9n],
  ["M", 10n ** 6n],
  ["k", 10n ** 3n],
];

/**
 * A quantity as people read it in `kubectl describe resourcequota`, exact and parseable back:
 * - cpu in cores when whole ("2"), else millicores ("1500m", "250m"), else nanocores ("1n");
 * - memory in the largest binary suffix that divides it ("2Gi", "1536Mi"), else the largest
 *   decimal one ("100M", "129M"), else bytes ("1000001"); below a byte in m/u/n;
 * - counts as integers ("10"), a fraction (never valid for counts) in m/u/n.
 */
export function formatQuantity(nano: bigint, kind: QuantityKind): string {
  if (nano < 0n) return `-${formatQuantity(-nano, kind)}`;
  if (nano === 0n) return "0";
  if (nano % NANO_PER_UNIT !== 0n || kind === "cpu") return formatWithFraction(nano);
  const units = nano / NANO_PER_UNIT;
  if (kind === "memory") {
    for (const [suffix, size] of BINARY_RENDERING) if (units % size === 0n) return `${units / size}${suffix}`;
    for (const [suffix, size] of DECIMAL_RENDERING)
      if (units % size === 0n) return `${units / size}${suffix}`;
  }
  return units.toString();
}

/** Whole units as digits, else the coarsest of m, u, n that is exact. */
function formatWithFraction(nano: bigint): string {
  if (nano % NANO_PER_UNIT === 0n) return (nano / NANO_PER_UNIT).toString();
  if (nano % 1_000_000n === 0n) return `${nano / 1_000_000n}m`;
  if (nano % 1_000n === 0n) return `${nano / 1_000n}u`;
  return `${nano}n`;
}
