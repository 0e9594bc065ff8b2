/**
 * Relays a response body with its small chunks merged (pure stream plumbing). A kubelet flushes a
 * log after every line, so a 200,000-line `kubectl logs` arrives as 200,000 tiny chunks; relayed one
 * by one, each costs a chunk header and a TLS record per hop. Chunks that arrive within one turn of
 * the event loop (or until `maxBytes`) leave as one: nothing waits longer than that turn, so a
 * followed log is as live as before.
 */
import { Transform, type TransformCallback } from "node:stream";

export function coalescing(maxBytes = 64 * 1024): Transform {
  let pending: Buffer[] = [];
  let size = 0;
  let scheduled: NodeJS.Immediate | undefined;
  const flush = (stream: Transform) => {
    if (scheduled) clearImmediate(scheduled);
    scheduled = undefined;
    if (size === 0) return;
    const merged = pending.length === 1 ? (pending[0] as Buffer) : Buffer.concat(pending, size);
    pending = [];
    size = 0;
    stream.push(merged);
  };
  return new Transform({
    transform(this: Transform, chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback) {
      pending.push(chunk);
      size += chunk.length;
      if (size >= maxBytes) flush(this);
      else scheduled ??= setImmediate(() => flush(this));
      done();
    },
    flush(this: Transform, done: TransformCallback) {
      flush(this);
      done();
    },
    destroy(error, done) {
      if (scheduled) clearImmediate(scheduled);
      done(error);
    },
  });
}
