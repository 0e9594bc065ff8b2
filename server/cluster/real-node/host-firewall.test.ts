import { describe, expect, it } from "vitest";
import { overlappingRoutes } from "./host-firewall";

describe("the sink routes' check of the host's own routes", () => {
  const routes = (...lines: string[]) => lines.join("\n");

  it("finds a route of the host inside or around the pod and Service networks", () => {
    const found = overlappingRoutes(
      routes(
        "default via 192.0.2.1 dev eth0",
        "192.0.2.0/24 dev eth0 proto kernel scope link src 192.0.2.2",
        "10.0.0.0/24 dev ens4 proto kernel scope link src 10.0.0.5",
        "10.0.0.0/8 via 192.0.2.1 dev eth0",
        "10.244.3.0/24 dev docker0 proto kernel scope link src 10.244.3.1",
        "10.244.9.7 via 192.0.2.1 dev eth0",
      ),
    );
    expect(found).toEqual([
      "10.0.0.0/24 dev ens4 proto kernel scope link src 10.0.0.5",
      "10.0.0.0/8 via 192.0.2.1 dev eth0",
      "10.244.3.0/24 dev docker0 proto kernel scope link src 10.244.3.1",
      "10.244.9.7 via 192.0.2.1 dev eth0",
    ]);
  });

  it("leaves the default route, neighbours of the ranges and Ring0's own bridges and sink alone", () => {
    expect(
      overlappingRoutes(
        routes(
          "default via 10.0.0.1 dev eth0",
          "10.0.1.0/24 dev eth1 proto kernel scope link src 10.0.1.9",
          "10.245.0.0/16 dev eth2",
          "10.243.255.0/24 dev eth3",
          "10.244.0.0/24 dev ring0br0 proto kernel scope link src 10.244.0.1",
          "10.244.0.0/16 dev ring0sink scope link src 10.244.255.1",
          "10.0.0.0/24 dev ring0sink scope link src 10.244.255.1",
          "",
        ),
      ),
    ).toEqual([]);
  });
});
