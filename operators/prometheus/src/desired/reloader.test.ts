// The reloader's decision logic, run for real: RELOADER_SCRIPT under sh against temporary directories, with a
// fake wget on PATH standing for Prometheus's /-/reload. It unpacks the gzipped configuration, reloads once per
// change of the mounted Secret (not on every check), and retries a refused reload until it succeeds.
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { afterEach, describe, expect, it } from "vitest";
import { CONFIG_KEY, RELOADER_SCRIPT } from "./objects.ts";

interface Harness {
  dir: string;
  src: string;
  out: string;
  calls: string;
  /** When this file exists, the fake wget fails (Prometheus refuses or is not up yet). */
  failFlag: string;
  env: NodeJS.ProcessEnv;
}

function harness(): Harness {
  const dir = mkdtempSync(join(tmpdir(), "prom-reloader-"));
  const src = join(dir, "secret");
  const bin = join(dir, "bin");
  mkdirSync(src);
  mkdirSync(bin);
  const calls = join(dir, "calls");
  const failFlag = join(dir, "fail");
  writeFileSync(calls, "");
  // The fake wget records the URL it was given (the last argument) and the config it would reload.
  writeFileSync(
    join(bin, "wget"),
    `#!/bin/sh\nfor a; do last="$a"; done\nif [ -e "${failFlag}" ]; then echo "fail $last" >> "${calls}"; exit 1; fi\necho "ok $last $(head -c 40 "${join(dir, "prometheus.yml")}" | tr '\\n' ' ')" >> "${calls}"\n`,
  );
  chmodSync(join(bin, "wget"), 0o755);
  return {
    dir,
    src,
    out: join(dir, "prometheus.yml"),
    calls,
    failFlag,
    env: {
      PATH: `${bin}:${process.env.PATH ?? ""}`,
      SRC_DIR: src,
      CONFIG_OUT: join(dir, "prometheus.yml"),
      RELOAD_URL: "http://127.0.0.1:9090/-/reload",
      CHECK_SECONDS: "0.05",
    },
  };
}

function writeConfig(h: Harness, yaml: string, rules: Record<string, string> = {}): void {
  writeFileSync(join(h.src, CONFIG_KEY), gzipSync(Buffer.from(yaml)));
  for (const [k, v] of Object.entries(rules)) writeFileSync(join(h.src, k), v);
}

const lines = (h: Harness) => readFileSync(h.calls, "utf8").split("\n").filter(Boolean);

async function until(what: string, ok: () => boolean): Promise<void> {
  for (let i = 0; i < 400; i++) {
    if (ok()) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`the reloader never reached: ${what}`);
}

let running: ChildProcess | undefined;
let dirs: string[] = [];
afterEach(() => {
  running?.kill();
  running = undefined;
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  dirs = [];
});

function start(h: Harness): ChildProcess {
  dirs.push(h.dir);
  running = spawn("sh", ["-c", RELOADER_SCRIPT, "reloader"], { env: h.env, stdio: "ignore" });
  return running;
}

describe("the reloader script", () => {
  it("once (the init container) unpacks the configuration and reloads nothing", () => {
    const h = harness();
    dirs.push(h.dir);
    writeConfig(h, "global: {}\n");
    execFileSync("sh", ["-c", RELOADER_SCRIPT, "reloader", "once"], { env: h.env });
    expect(readFileSync(h.out, "utf8")).toBe("global: {}\n");
    expect(lines(h)).toEqual([]);
  });

  it("reloads once per change of the mounted files, with the new configuration unpacked first", async () => {
    const h = harness();
    writeConfig(h, "version: 1\n");
    start(h);
    await until("the first reload", () => lines(h).length >= 1);
    // Several checks pass with nothing changed: no further reload.
    await new Promise((r) => setTimeout(r, 300));
    expect(lines(h)).toEqual(["ok http://127.0.0.1:9090/-/reload version: 1 "]);

    writeConfig(h, "version: 2\n");
    await until("the reload of version 2", () => lines(h).length >= 2);
    expect(lines(h)[1]).toBe("ok http://127.0.0.1:9090/-/reload version: 2 ");
    expect(readFileSync(h.out, "utf8")).toBe("version: 2\n");

    // A rule file change alone (config unchanged) reloads too: Prometheus re-reads rule files on reload.
    writeConfig(h, "version: 2\n", { "ns_rules.yaml": "groups: []\n" });
    await until("the reload for the rule file", () => lines(h).length >= 3);
    await new Promise((r) => setTimeout(r, 300));
    expect(lines(h)).toHaveLength(3);
  });

  it("a refused reload is retried until Prometheus takes it", async () => {
    const h = harness();
    writeFileSync(h.failFlag, "");
    writeConfig(h, "version: 1\n");
    start(h);
    await until("two failed attempts", () => lines(h).filter((l) => l.startsWith("fail")).length >= 2);
    rmSync(h.failFlag);
    await until("a successful reload", () => lines(h).some((l) => l.startsWith("ok")));
    await new Promise((r) => setTimeout(r, 300));
    expect(lines(h).filter((l) => l.startsWith("ok"))).toHaveLength(1);
  });
});
