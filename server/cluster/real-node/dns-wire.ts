/**
 * The DNS wire format (RFC 1035), as much as the pods' DNS needs (pure): one question in, answers
 * of type A, AAAA-less NODATA, CNAME and SRV out. Queries are parsed strictly — one question, no
 * compression pointers, names within 255 bytes — and anything else is a FORMERR, never a crash.
 */

export const RCODE = { noError: 0, formErr: 1, servFail: 2, nxDomain: 3, notImp: 4, refused: 5 } as const;
export const QTYPE = { A: 1, CNAME: 5, SOA: 6, PTR: 12, AAAA: 28, SRV: 33, ANY: 255 } as const;
const CLASS_IN = 1;

export interface Question {
  id: number;
  /** Lower-cased, without the trailing dot. */
  name: string;
  type: number;
  class: number;
  /** Whether the client asked for recursion (echoed back). */
  recursionDesired: boolean;
  /** The question section as received (echoed back). */
  raw: Buffer;
}

export type Answer =
  | { type: "A"; name: string; address: string; ttl: number }
  | { type: "CNAME"; name: string; target: string; ttl: number }
  | {
      type: "SRV";
      name: string;
      priority: number;
      weight: number;
      port: number;
      target: string;
      ttl: number;
    };

/** The query's one question, or a response code for a query that cannot be answered (with its id when known). */
export function parseQuery(message: Buffer): Question | { id?: number; rcode: number } {
  if (message.length < 12) return { rcode: RCODE.formErr };
  const id = message.readUInt16BE(0);
  const flags = message.readUInt16BE(2);
  if (flags & 0x8000) return { id, rcode: RCODE.formErr }; // a response, not a query
  if (((flags >> 11) & 0xf) !== 0) return { id, rcode: RCODE.notImp }; // only standard queries
  if (message.readUInt16BE(4) !== 1) return { id, rcode: RCODE.formErr };
  const labels: string[] = [];
  let offset = 12;
  let length = 0;
  for (;;) {
    if (offset >= message.length) return { id, rcode: RCODE.formErr };
    const size = message[offset] as number;
    if (size === 0) break;
    if (size > 63) return { id, rcode: RCODE.formErr }; // pointers and extended labels
    length += size + 1;
    if (length > 255 || offset + 1 + size > message.length) return { id, rcode: RCODE.formErr };
    labels.push(
      message
        .subarray(offset + 1, offset + 1 + size)
        .toString("latin1")
        .toLowerCase(),
    );
    offset += 1 + size;
  }
  offset += 1;
  if (offset + 4 > message.length) return { id, rcode: RCODE.formErr };
  const type = message.readUInt16BE(offset);
  const klass = message.readUInt16BE(offset + 2);
  return {
    id,
    name: labels.join("."),
    type,
    class: klass,
    recursionDesired: Boolean(flags & 0x0100),
    raw: message.subarray(12, offset + 4),
  };
}

function encodeName(name: string): Buffer {
  const parts = name.split(".").filter(Boolean);
  return Buffer.concat([
    ...parts.map((label) => Buffer.concat([Buffer.from([label.length]), Buffer.from(label, "latin1")])),
    Buffer.from([0]),
  ]);
}

function record(answer: Answer): Buffer {
  let type: number;
  let data: Buffer;
  switch (answer.type) {
    case "A":
      type = QTYPE.A;
      data = Buffer.from(answer.address.split(".").map(Number));
      break;
    case "CNAME":
      type = QTYPE.CNAME;
      data = encodeName(answer.target);
      break;
    case "SRV": {
      type = QTYPE.SRV;
      const head = Buffer.alloc(6);
      head.writeUInt16BE(answer.priority, 0);
      head.writeUInt16BE(answer.weight, 2);
      head.writeUInt16BE(answer.port, 4);
      data = Buffer.concat([head, encodeName(answer.target)]);
      break;
    }
  }
  const fixed = Buffer.alloc(10);
  fixed.writeUInt16BE(type, 0);
  fixed.writeUInt16BE(CLASS_IN, 2);
  fixed.writeUInt32BE(answer.ttl, 4);
  fixed.writeUInt16BE(data.length, 8);
  return Buffer.concat([encodeName(answer.name), fixed, data]);
}

/**
 * A response to `question` (or to a query that could not be parsed: no question echoed). Authoritative
 * for the names it answers; recursion is never available. Past `maxBytes` (512 over UDP) the answers
 * are cut and the response says it was truncated, so the client asks again over TCP.
 */
export function encodeResponse(
  question: Question | { id?: number },
  rcode: number,
  answers: Answer[] = [],
  maxBytes = 65_535,
): Buffer {
  const full = "raw" in question;
  const records = answers.map(record);
  const questionBytes = full ? question.raw.length : 0;
  let kept = records.length;
  let size = 12 + questionBytes + records.reduce((total, entry) => total + entry.length, 0);
  while (size > maxBytes && kept > 0) {
    kept -= 1;
    size -= (records[kept] as Buffer).length;
  }
  const header = Buffer.alloc(12);
  header.writeUInt16BE(question.id ?? 0, 0);
  const truncated = kept < records.length ? 0x0200 : 0;
  const recursion = full && question.recursionDesired ? 0x0100 : 0;
  header.writeUInt16BE(0x8000 | 0x0400 | truncated | recursion | (rcode & 0xf), 2);
  header.writeUInt16BE(full ? 1 : 0, 4);
  header.writeUInt16BE(kept, 6);
  return Buffer.concat([header, ...(full ? [question.raw] : []), ...records.slice(0, kept)]);
}
