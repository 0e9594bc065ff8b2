import { describe, expect, it } from "vitest";
import { encodeResponse, parseQuery, QTYPE, RCODE } from "./dns-wire";
import { answerQuestion, type DnsService, type DnsView } from "./pod-dns";

/** A query for `name` of `type`, as a stub resolver sends it. */
function query(name: string, type: number = QTYPE.A, id = 0x1234): Buffer {
  const header = Buffer.from([id >> 8, id & 0xff, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0]);
  const labels = name
    .split(".")
    .map((label) => Buffer.concat([Buffer.from([label.length]), Buffer.from(label)]));
  return Buffer.concat([header, ...labels, Buffer.from([0, type >> 8, type & 0xff, 0, 1])]);
}

const services: Record<string, Record<string, DnsService>> = {
  acme: {
    "default/web": {
      type: "ClusterIP",
      clusterIP: "10.0.0.42",
      ports: [{ name: "http", protocol: "TCP", port: 80 }],
    },
    "default/db": { type: "ClusterIP", clusterIP: "None", ports: [] },
    "default/upstream": { type: "ExternalName", externalName: "web.default.svc.cluster.local", ports: [] },
  },
  globex: {},
};
const view: DnsView = {
  service: (tenant, namespace, name) => services[tenant]?.[`${namespace}/${name}`],
  endpoints: (tenant, namespace, name) =>
    tenant === "acme" && namespace === "default" && name === "db"
      ? [
          { address: "10.244.0.7", hostname: "db-0" },
          { address: "10.244.0.8", hostname: "db-1" },
        ]
      : [],
  podApi: () => "10.244.255.1",
};
const ask = (tenant: string, name: string, type: number = QTYPE.A) =>
  answerQuestion({ name, type }, tenant, view);

describe("the pods' DNS answers", () => {
  it("a Service of the asking tenant by its cluster IP", () => {
    expect(ask("acme", "web.default.svc.cluster.local")).toEqual({
      rcode: RCODE.noError,
      answers: [{ type: "A", name: "web.default.svc.cluster.local", address: "10.0.0.42", ttl: 5 }],
    });
    // A name that exists has no IPv6 address: NODATA, not NXDOMAIN (so resolvers do not give up on A).
    expect(ask("acme", "web.default.svc.cluster.local", QTYPE.AAAA)).toEqual({
      rcode: RCODE.noError,
      answers: [],
    });
  });

  it("NXDOMAIN for another tenant's Services, however named", () => {
    expect(ask("globex", "web.default.svc.cluster.local").rcode).toBe(RCODE.nxDomain);
    expect(ask("globex", "web.acme-1a2b-default.svc.cluster.local").rcode).toBe(RCODE.nxDomain);
    expect(ask("acme", "web.default.default.svc.cluster.local").rcode).toBe(RCODE.nxDomain);
    expect(ask("acme", "default.svc.cluster.local").rcode).toBe(RCODE.nxDomain);
  });

  it("headless Services by their endpoints, and a StatefulSet pod by its hostname", () => {
    expect(
      ask("acme", "db.default.svc.cluster.local").answers.map(
        (answer) => answer.type === "A" && answer.address,
      ),
    ).toEqual(["10.244.0.7", "10.244.0.8"]);
    expect(ask("acme", "db-1.db.default.svc.cluster.local").answers).toEqual([
      { type: "A", name: "db-1.db.default.svc.cluster.local", address: "10.244.0.8", ttl: 5 },
    ]);
    expect(ask("acme", "db-9.db.default.svc.cluster.local").rcode).toBe(RCODE.nxDomain);
    // A ClusterIP Service has no per-host names.
    expect(ask("acme", "db-0.web.default.svc.cluster.local").rcode).toBe(RCODE.nxDomain);
  });

  it("ExternalName as a CNAME, ports as SRV, the API server as kubernetes.default", () => {
    expect(ask("acme", "upstream.default.svc.cluster.local", QTYPE.CNAME).answers).toEqual([
      {
        type: "CNAME",
        name: "upstream.default.svc.cluster.local",
        target: "web.default.svc.cluster.local",
        ttl: 5,
      },
    ]);
    expect(ask("acme", "_http._tcp.web.default.svc.cluster.local", QTYPE.SRV).answers).toEqual([
      {
        type: "SRV",
        name: "_http._tcp.web.default.svc.cluster.local",
        priority: 0,
        weight: 100,
        port: 80,
        target: "web.default.svc.cluster.local",
        ttl: 5,
      },
    ]);
    expect(ask("acme", "_http._udp.web.default.svc.cluster.local", QTYPE.SRV).rcode).toBe(RCODE.nxDomain);
    expect(ask("globex", "kubernetes.default.svc.cluster.local").answers).toEqual([
      { type: "A", name: "kubernetes.default.svc.cluster.local", address: "10.244.255.1", ttl: 5 },
    ]);
  });

  it("a Service's name relative to the cluster domain, as resolvers without a search path ask", () => {
    expect(ask("acme", "web.default").answers).toEqual([
      { type: "A", name: "web.default", address: "10.0.0.42", ttl: 5 },
    ]);
    expect(ask("acme", "web.default.svc").answers).toEqual([
      { type: "A", name: "web.default.svc", address: "10.0.0.42", ttl: 5 },
    ]);
    expect(ask("globex", "web.default").rcode).toBe(RCODE.refused);
  });

  it("REFUSED beyond the cluster domain: it resolves nothing else for a pod", () => {
    expect(ask("acme", "example.com").rcode).toBe(RCODE.refused);
    expect(ask("acme", "cluster.local.example.com").rcode).toBe(RCODE.refused);
  });
});

describe("the DNS wire format", () => {
  it("reads a resolver's query and writes an authoritative answer it can read", () => {
    const question = parseQuery(query("Web.Default.svc.cluster.local"));
    if (!("name" in question)) throw new Error("not parsed");
    expect(question).toMatchObject({ id: 0x1234, name: "web.default.svc.cluster.local", type: QTYPE.A });
    const reply = encodeResponse(question, RCODE.noError, [
      { type: "A", name: question.name, address: "10.0.0.42", ttl: 5 },
    ]);
    expect(reply.readUInt16BE(0)).toBe(0x1234);
    expect(reply.readUInt16BE(2)).toBe(0x8000 | 0x0400 | 0x0100); // response, authoritative, RD echoed
    expect(reply.readUInt16BE(4)).toBe(1);
    expect(reply.readUInt16BE(6)).toBe(1);
    expect([...reply.subarray(-4)]).toEqual([10, 0, 0, 42]);
  });

  it("answers malformed queries with FORMERR and never throws", () => {
    expect(parseQuery(Buffer.alloc(5))).toEqual({ rcode: RCODE.formErr });
    const pointer = Buffer.concat([query("a.b").subarray(0, 12), Buffer.from([0xc0, 0x0c, 0, 1, 0, 1])]);
    expect(parseQuery(pointer)).toEqual({ id: 0x1234, rcode: RCODE.formErr });
    expect(parseQuery(query("a.b").subarray(0, 16))).toEqual({ id: 0x1234, rcode: RCODE.formErr });
    const long = query(Array.from({ length: 10 }, () => "a".repeat(30)).join("."));
    expect(parseQuery(long)).toEqual({ id: 0x1234, rcode: RCODE.formErr });
    const response = query("a.b");
    response[2] = 0x81;
    expect(parseQuery(response)).toEqual({ id: 0x1234, rcode: RCODE.formErr });
    for (let size = 0; size < 40; size++) expect(() => parseQuery(Buffer.alloc(size, 0xff))).not.toThrow();
  });

  it("truncates past the UDP size so the resolver asks again over TCP", () => {
    const question = parseQuery(query("db.default.svc.cluster.local"));
    if (!("name" in question)) throw new Error("not parsed");
    const many = Array.from({ length: 40 }, (_, index) => ({
      type: "A" as const,
      name: question.name,
      address: `10.244.0.${index}`,
      ttl: 5,
    }));
    const reply = encodeResponse(question, RCODE.noError, many, 512);
    expect(reply.length).toBeLessThanOrEqual(512);
    expect(reply.readUInt16BE(2) & 0x0200).toBe(0x0200);
    expect(reply.readUInt16BE(6)).toBeLessThan(40);
  });
});
