import { Readable } from "node:stream";
import { describe, expect, it } from "vitest";
import { coalescing } from "./coalesce";

/** The chunks as pushed ('data' events in flowing mode; an async iterator would merge them itself). */
function chunksOf(stream: NodeJS.ReadableStream): Promise<Buffer[]> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    stream.on("data", (chunk: Buffer) => chunks.push(chunk));
    stream.on("end", () => resolve(chunks));
    stream.on("error", reject);
  });
}

describe("coalescing", () => {
  it("merges chunks that arrive together and keeps every byte in order", async () => {
    const lines = Array.from({ length: 10_000 }, (_, index) => Buffer.from(`line ${index}\n`));
    const out = await chunksOf(Readable.from(lines).pipe(coalescing(16 * 1024)));
    expect(Buffer.concat(out).toString()).toBe(Buffer.concat(lines).toString());
    expect(out.length).toBeLessThan(lines.length / 100);
    expect(Math.max(...out.map((chunk) => chunk.length))).toBeLessThan(16 * 1024 + 32);
  });

  it("never holds a lone chunk back (a followed log stays live)", async () => {
    const through = coalescing();
    const seen: string[] = [];
    through.on("data", (chunk: Buffer) => seen.push(chunk.toString()));
    through.write(Buffer.from("first\n"));
    await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setImmediate(resolve));
    expect(seen).toEqual(["first\n"]);
    through.end();
  });
});
