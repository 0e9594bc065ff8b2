import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  compareQuantity,
  formatQuantity,
  isQuantity,
  MAX_QUANTITY_NANO,
  maxQuantity,
  NANO_PER_UNIT,
  parseQuantity,
  QuantityError,
  type QuantityKind,
  quantityToNumber,
  roundUpToUnits,
} from "./quantity";

const G = NANO_PER_UNIT;

describe("parseQuantity", () => {
  it.each([
    ["0", 0n],
    ["1", G],
    ["2", 2n * G],
    ["100m", 100_000_000n],
    ["0.1", 100_000_000n],
    [".5", 500_000_000n],
    ["1.", G],
    ["+1", G],
    ["007", 7n * G],
    ["1500m", 1_500_000_000n],
    ["250u", 250_000n],
    ["3n", 3n],
    ["1k", 1000n * G],
    ["1M", 10n ** 6n * G],
    ["129M", 129_000_000n * G],
    ["1G", 10n ** 9n * G],
    ["1T", 10n ** 12n * G],
    ["1P", 10n ** 15n * G],
    ["1E", 10n ** 18n * G],
    ["1Ki", 1024n * G],
    ["1Mi", 2n ** 20n * G],
    ["1.5Gi", 3n * 2n ** 29n * G],
    ["1Ti", 2n ** 40n * G],
    ["1Pi", 2n ** 50n * G],
    ["1e3", 1000n * G],
    ["1E3", 1000n * G],
    ["1e+3", 1000n * G],
    ["15e-1", 1_500_000_000n],
    ["1e-9", 1n],
    ["0.5Ki", 512n * G],
    ["0e99999", 0n],
    ["-0", 0n],
  ])("%s → %s nano", (text, nano) => {
    expect(parseQuantity(text)).toBe(nano);
  });

  it("rounds anything finer than a nano up, away from zero, like Kubernetes", () => {
    expect(parseQuantity("0.1n")).toBe(1n);
    expect(parseQuantity("1.0000000001")).toBe(G + 1n);
    expect(parseQuantity("1e-30")).toBe(1n);
    expect(parseQuantity("1e-99999")).toBe(1n);
    expect(parseQuantity("0.0000000000")).toBe(0n);
    expect(parseQuantity("-1.5n", { allowNegative: true })).toBe(-2n);
    // 1Ki/3 is not representable: 0.333…Ki rounds up at the ninth decimal.
    expect(parseQuantity("0.3333333333333Ki")).toBe(341_333_333_334n);
  });

  it("accepts negatives only when asked", () => {
    expect(parseQuantity("-1", { allowNegative: true })).toBe(-G);
    expect(parseQuantity("-500m", { allowNegative: true })).toBe(-500_000_000n);
    expect(() => parseQuantity("-1")).toThrow(/"-1" is not a valid quantity: it is negative; use /);
  });

  it("takes Kubernetes' largest quantity and refuses anything larger", () => {
    expect(parseQuantity("9223372036854775807")).toBe(MAX_QUANTITY_NANO);
    expect(() => parseQuantity("9223372036854775808")).toThrow(/larger than Kubernetes' maximum/);
    expect(() => parseQuantity("8Ei")).toThrow(/larger/);
    expect(parseQuantity("7Ei")).toBe(7n * 2n ** 60n * G);
    expect(() => parseQuantity("1e99999999999999999999")).toThrow(/larger/);
  });

  it.each([
    ["", /it is empty/],
    ["-1", /it is negative/],
    ["1.5.3", /more than one decimal point/],
    ["12Xi", /the suffix "Xi" is not one of n u m k M G T P E, Ki Mi Gi Ti Pi Ei/],
    ["1e", /the exponent "e" has no digits/],
    ["1e+", /the exponent "e\+" has no digits/],
    ["1e1.5", /exponent must be a whole number/],
    [" 1", /whitespace/],
    ["1 ", /whitespace/],
    ["1 Gi", /whitespace/],
    ["1\tGi", /whitespace/],
    ["1".repeat(65), /65 characters long \(at most 64\)/],
    ["+", /does not start with a number/],
    ["-", /does not start with a number/],
    [".", /does not start with a number/],
    ["Gi", /does not start with a number/],
    ["e3", /does not start with a number/],
    ["1K", /use k \(1000\) or Ki \(1024\)/],
    ["1GB", /use G \(10\^9\) or Gi \(2\^30\)/],
    ["1GiB", /use Gi/],
    ["1mi", /use Mi/],
    ["1Gi1", /the suffix "Gi1"/],
    ["0x10", /the suffix "x10"/],
    ["1,5", /the suffix ",5"/],
    ["--1", /does not start with a number/],
    ["1ee3", /the suffix "ee3"/],
    ["1toString", /the suffix "toString"/],
    ["1constructor", /the suffix "constructor"/],
    ["1__proto__", /the suffix "__proto__"/],
  ])("%j is refused (%s)", (text, reason) => {
    expect(() => parseQuantity(text)).toThrow(QuantityError);
    expect(() => parseQuantity(text)).toThrow(reason);
  });

  it("says what a valid quantity looks like, and keeps the reason and input apart", () => {
    let caught: unknown;
    try {
      parseQuantity("1.5.3");
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(QuantityError);
    const error = caught as QuantityError;
    expect(error.message).toBe(
      '"1.5.3" is not a valid quantity: it has more than one decimal point; use a number with an optional suffix, e.g. 500m, 2, 0.5, 1.5Gi, 128Mi, 100M or 1e3',
    );
    expect(error.input).toBe("1.5.3");
    expect(error.reason).toBe("it has more than one decimal point");
    expect(error.name).toBe("QuantityError");
  });

  it("does not echo absurdly long input in full", () => {
    expect(() => parseQuantity("9".repeat(10_000))).toThrow(/^"9{20}…" is not a valid quantity/);
  });

  it("refuses what is not text at all", () => {
    expect(() => parseQuantity(5 as unknown as string)).toThrow(/not text/);
  });

  it("isQuantity answers without throwing", () => {
    expect(isQuantity("2Gi")).toBe(true);
    expect(isQuantity("2GB")).toBe(false);
    expect(isQuantity("-2")).toBe(false);
    expect(isQuantity("-2", { allowNegative: true })).toBe(true);
  });
});

describe("formatQuantity", () => {
  it.each<[string, QuantityKind, string]>([
    ["2", "cpu", "2"],
    ["1.5", "cpu", "1500m"],
    ["250m", "cpu", "250m"],
    ["0.1", "cpu", "100m"],
    ["1e3", "cpu", "1000"],
    ["250u", "cpu", "250u"],
    ["1500001n", "cpu", "1500001n"],
    ["0", "cpu", "0"],
    ["2Gi", "memory", "2Gi"],
    ["1.5Gi", "memory", "1536Mi"],
    ["2048Mi", "memory", "2Gi"],
    ["1024", "memory", "1Ki"],
    ["100M", "memory", "100M"],
    ["129M", "memory", "129M"],
    ["1e3", "memory", "1k"],
    ["3G", "memory", "3G"],
    ["1000001", "memory", "1000001"],
    ["1Ei", "memory", "1Ei"],
    ["500m", "memory", "500m"],
    ["10", "count", "10"],
    ["1k", "count", "1000"],
    ["0", "count", "0"],
  ])("%s as %s → %s", (text, kind, expected) => {
    expect(formatQuantity(parseQuantity(text), kind)).toBe(expected);
  });

  it("renders negatives with a sign", () => {
    expect(formatQuantity(-1_500_000_000n, "cpu")).toBe("-1500m");
    expect(formatQuantity(-(2n ** 30n) * G, "memory")).toBe("-1Gi");
  });
});

const kinds = fc.constantFrom<QuantityKind>("cpu", "memory", "count");
const nanos = fc.bigInt({ min: 0n, max: MAX_QUANTITY_NANO });
const signedNanos = fc.bigInt({ min: -MAX_QUANTITY_NANO, max: MAX_QUANTITY_NANO });
/** Texts that look like quantities: digits, an optional fraction and any suffix. */
const quantityTexts = fc
  .tuple(
    fc.stringMatching(/^\d{1,12}$/),
    fc.option(fc.stringMatching(/^\d{0,12}$/), { nil: undefined }),
    fc.constantFrom("", "n", "u", "m", "k", "M", "G", "T", "Ki", "Mi", "Gi", "Ti", "e3", "e-2", "E1"),
  )
  .map(([whole, fraction, suffix]) => `${whole}${fraction === undefined ? "" : `.${fraction}`}${suffix}`);

describe("properties", () => {
  it("format then parse gives the same amount, for every kind", () => {
    fc.assert(
      fc.property(signedNanos, kinds, (nano, kind) => {
        expect(parseQuantity(formatQuantity(nano, kind), { allowNegative: true })).toBe(nano);
      }),
      { numRuns: 2000 },
    );
  });

  it("parse, format, parse is stable for any accepted text", () => {
    fc.assert(
      fc.property(quantityTexts, kinds, (text, kind) => {
        let nano: bigint;
        try {
          nano = parseQuantity(text);
        } catch (error) {
          expect(error).toBeInstanceOf(QuantityError);
          expect((error as QuantityError).reason).toMatch(/larger than Kubernetes' maximum/);
          return;
        }
        expect(nano).toBeGreaterThanOrEqual(0n);
        expect(parseQuantity(formatQuantity(nano, kind))).toBe(nano);
      }),
      { numRuns: 2000 },
    );
  });

  it("formatting never yields more than Kubernetes' suffixes and digits", () => {
    fc.assert(
      fc.property(nanos, kinds, (nano, kind) => {
        expect(formatQuantity(nano, kind)).toMatch(/^\d+(n|u|m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei)?$/);
      }),
    );
  });

  it("millicores are rendered as written", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 1_000_000 }), (milli) => {
        const text = formatQuantity(parseQuantity(`${milli}m`), "cpu");
        expect(text).toBe(milli % 1000 === 0 ? `${milli / 1000}` : `${milli}m`);
      }),
    );
  });

  it("compareQuantity orders like the numbers and is antisymmetric", () => {
    fc.assert(
      fc.property(signedNanos, signedNanos, (a, b) => {
        expect(compareQuantity(a, b)).toBe(a < b ? -1 : a > b ? 1 : 0);
        expect(compareQuantity(b, a)).toBe(-compareQuantity(a, b) || 0);
      }),
    );
  });

  it("rounding up to whole units never loses and never adds a whole unit", () => {
    fc.assert(
      fc.property(nanos, (nano) => {
        const rounded = roundUpToUnits(nano);
        expect(rounded % NANO_PER_UNIT).toBe(0n);
        expect(rounded >= nano && rounded - nano < NANO_PER_UNIT).toBe(true);
      }),
    );
  });
});

describe("helpers", () => {
  it("compareQuantity parses texts", () => {
    expect(compareQuantity("1Gi", "1G")).toBe(1);
    expect(compareQuantity("1000m", "1")).toBe(0);
    expect(compareQuantity("100m", "0.2")).toBe(-1);
  });

  it("maxQuantity, roundUpToUnits and quantityToNumber", () => {
    expect(maxQuantity(1n, 2n)).toBe(2n);
    expect(maxQuantity(3n, 2n)).toBe(3n);
    expect(roundUpToUnits(parseQuantity("2.5"))).toBe(3n * G);
    expect(roundUpToUnits(parseQuantity("-2.5", { allowNegative: true }))).toBe(-3n * G);
    expect(roundUpToUnits(4n * G)).toBe(4n * G);
    expect(quantityToNumber(parseQuantity("1500m"))).toBe(1.5);
    expect(quantityToNumber(parseQuantity("2Gi"))).toBe(2 ** 31);
  });
});
