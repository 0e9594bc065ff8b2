import { describe, expect, it } from "vitest";
import { limitedBody, requestRefusal } from "./http";

const settings = { allowedOrigins: ["http://localhost:3000"], maxBodyBytes: 1_024 };
const post = (headers: Record<string, string>, method = "POST") =>
  new Request("http://localhost:3000/api/trpc/tokens.issue", { method, headers });

describe("requestRefusal", () => {
  it("refuses a state-changing request acting with the session cookie from another origin (403)", () => {
    const refusal = requestRefusal(post({ origin: "https://evil.example", cookie: "s=1" }), settings);
    expect(refusal).toMatchObject({
      code: "FORBIDDEN",
      message: expect.stringMatching(/^Origin not allowed/),
    });
    expect(requestRefusal(post({ cookie: "s=1" }), settings)).toMatchObject({ code: "FORBIDDEN" });
    expect(requestRefusal(post({ origin: "http://localhost:3000", cookie: "s=1" }), settings)).toBeNull();
    expect(
      requestRefusal(post({ referer: "http://localhost:3000/t/acme", cookie: "s=1" }), settings),
    ).toBeNull();
  });

  it("lets reads through (subscriptions and queries over GET) and bearer tokens without an Origin", () => {
    expect(requestRefusal(post({ origin: "https://evil.example" }, "GET"), settings)).toBeNull();
    expect(requestRefusal(post({ authorization: "Bearer r0_x" }), settings)).toBeNull();
    // A malformed bearer header is still the only credential looked at: no cookie can act.
    expect(requestRefusal(post({ authorization: "Bearer", cookie: "s=1" }), settings)).toBeNull();
    expect(
      requestRefusal(post({ authorization: "Bearer r0_x", origin: "https://evil.example" }), settings),
    ).toMatchObject({
      code: "FORBIDDEN",
    });
  });

  it("refuses a declared body over the cap before reading it (413), naming the limit", () => {
    const refusal = requestRefusal(
      post({ origin: "http://localhost:3000", "content-length": "1025" }),
      settings,
    );
    expect(refusal).toMatchObject({
      code: "PAYLOAD_TOO_LARGE",
      message: expect.stringContaining("larger than 1024 bytes (RING0_TRPC_MAX_BODY_BYTES)"),
    });
    expect(
      requestRefusal(post({ origin: "http://localhost:3000", "content-length": "1024" }), settings),
    ).toBeNull();
  });
});

function streamOf(chunks: number[]): ReadableStream<Uint8Array> {
  return new ReadableStream({
    start(controller) {
      for (const size of chunks) controller.enqueue(new Uint8Array(size));
      controller.close();
    },
  });
}

async function readAll(body: ReadableStream<Uint8Array>): Promise<number> {
  const reader = body.getReader();
  let total = 0;
  for (let read = await reader.read(); !read.done; read = await reader.read()) total += read.value.byteLength;
  return total;
}

describe("limitedBody", () => {
  it("passes a body up to the cap", async () => {
    expect(await readAll(limitedBody(streamOf([512, 512]), 1_024))).toBe(1_024);
  });

  it("fails a body that grows past the cap (no Content-Length, chunked) with a 413", async () => {
    await expect(readAll(limitedBody(streamOf([512, 512, 1]), 1_024))).rejects.toMatchObject({
      code: "PAYLOAD_TOO_LARGE",
    });
  });

  it("stops pulling from the source once the cap is passed", async () => {
    let pulled = 0;
    const endless = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulled += 1;
        controller.enqueue(new Uint8Array(256));
      },
    });
    await expect(readAll(limitedBody(endless, 1_024))).rejects.toMatchObject({ code: "PAYLOAD_TOO_LARGE" });
    expect(pulled).toBeLessThan(20);
  });
});
