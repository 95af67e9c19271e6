// The reloader script under the real busybox the pods run (the local cluster's capstan.local/busybox:1 is Debian's
// busybox-static: e2e/images/busybox/build.sh), against an HTTP server standing for Prometheus: busybox's sh,
// gunzip, md5sum and `wget --post-data ''` really send POST /-/reload, once per change, and retry a 500 (the "real"
// project; fails when busybox is missing, saying how to get it). And it ends at once on SIGTERM as its container's PID 1
// (which ignores a signal it has no handler for): run as PID 1 of a new PID namespace (unshare, as root).
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CONFIG_KEY, RELOADER_SCRIPT } from "./objects.ts";

function findBusybox(): string {
  const candidates = [process.env.CAPSTAN_BUSYBOX, "/bin/busybox", "/usr/bin/busybox"].filter(
    (c): c is string => c !== undefined && c !== "",
  );
  for (const c of candidates) {
    try {
      execFileSync(c, ["true"]);
      return c;
    } catch {
      // try the next one
    }
  }
  throw new Error(
    "busybox not found: install Debian's busybox-static (apt-get install busybox-static, as e2e/images/busybox/build.sh does) or set CAPSTAN_BUSYBOX",
  );
}

let dir = "";
let busybox = "";
let server: Server;
let url = "";
/** Requests Prometheus got, as "METHOD path <config it would load>". */
const requests: string[] = [];
let failNext = 0;
let child: ChildProcess | undefined;

beforeAll(async () => {
  busybox = findBusybox();
  dir = mkdtempSync(join(tmpdir(), "prom-reloader-real-"));
  const bin = join(dir, "bin");
  mkdirSync(bin);
  mkdirSync(join(dir, "secret"));
  for (const applet of ["sh", "gunzip", "md5sum", "wget", "cat", "mv", "sleep"])
    symlinkSync(busybox, join(bin, applet));
  server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      let config = "";
      try {
        config = readFileSync(join(dir, "prometheus.yml"), "utf8").trim();
      } catch {
        config = "(none)";
      }
      requests.push(`${req.method} ${req.url} ${config}`);
      if (failNext > 0) {
        failNext--;
        res.writeHead(500).end("failed to reload config");
      } else res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/-/reload`;
  writeFileSync(join(dir, "secret", CONFIG_KEY), gzipSync("version: 1\n"));
  child = spawn(busybox, ["sh", "-c", RELOADER_SCRIPT, "reloader"], {
    env: {
      PATH: bin,
      SRC_DIR: join(dir, "secret"),
      CONFIG_OUT: join(dir, "prometheus.yml"),
      RELOAD_URL: url,
      CHECK_SECONDS: "1",
    },
    stdio: "ignore",
  });
});

afterAll(async () => {
  child?.kill();
  await new Promise((resolve) => server?.close(resolve));
  if (dir !== "") rmSync(dir, { recursive: true, force: true });
});

async function until(what: string, ok: () => boolean): Promise<void> {
  for (let i = 0; i < 300; i++) {
    if (ok()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`the reloader never reached: ${what}; requests: ${JSON.stringify(requests)}`);
}

describe("the reloader under busybox", () => {
  it("POSTs /-/reload with the configuration unpacked, once per change, and retries a refused reload", async () => {
    await until("the first reload", () => requests.length >= 1);
    expect(requests[0]).toBe("POST /-/reload version: 1");

    failNext = 1;
    writeFileSync(join(dir, "secret", CONFIG_KEY), gzipSync("version: 2\n"));
    await until("a retried reload of version 2", () => requests.length >= 3);
    expect(requests.slice(1, 3)).toEqual(["POST /-/reload version: 2", "POST /-/reload version: 2"]);
    // Checks keep passing with nothing changed: no further request.
    await new Promise((r) => setTimeout(r, 2_500));
    expect(requests).toHaveLength(3);
  });
});

describe("the reloader as its container's PID 1", () => {
  it("ends on SIGTERM without waiting out its check interval", async () => {
    // unshare: a new PID namespace whose PID 1 is sh (util-linux; root, as CI and the e2e node run).
    const before = requests.length;
    const pid1 = spawn(
      "/usr/bin/unshare",
      ["--pid", "--fork", busybox, "sh", "-c", RELOADER_SCRIPT, "reloader"],
      {
        env: {
          PATH: join(dir, "bin"),
          SRC_DIR: join(dir, "secret"),
          CONFIG_OUT: join(dir, "pid1.yml"),
          RELOAD_URL: url,
          CHECK_SECONDS: "600",
        },
        stdio: "ignore",
      },
    );
    const exited = new Promise<number | null>((resolve) => pid1.on("exit", (code) => resolve(code)));
    try {
      // The namespace's PID 1 is unshare's child: its host pid, once it has started its first check.
      let shPid = "";
      await until("the PID 1 reloader running", () => {
        try {
          shPid = execFileSync("pgrep", ["-P", String(pid1.pid)])
            .toString()
            .trim();
        } catch {
          shPid = "";
        }
        return shPid !== "" && requests.length > before;
      });
      await new Promise((r) => setTimeout(r, 500)); // into its sleep
      process.kill(Number(shPid), "SIGTERM");
      const code = await Promise.race([
        exited,
        new Promise<"still running">((r) => setTimeout(() => r("still running"), 10_000)),
      ]);
      expect(code).toBe(0);
    } finally {
      pid1.kill("SIGKILL");
    }
  });
});
