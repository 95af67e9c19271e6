// Tests of the local process kit with real processes (sh) and real sockets: a free port can be bound, output
// lands in the log, exits and kills are reported, a missing binary resolves instead of hanging.
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  capstanCacheDir,
  ephemeralPortRange,
  freePort,
  isRunning,
  killAll,
  spawnLogged,
} from "./local-process.ts";

let dir = "";
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "capstan-local-process-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("freePort", () => {
  it("returns a port that can be listened on", async () => {
    const port = await freePort();
    expect(port).toBeGreaterThan(0);
    const server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(port, "127.0.0.1", resolve);
    });
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it("chooses ports below the ephemeral range, which outbound connections draw from", async () => {
    const { low } = ephemeralPortRange();
    for (let i = 0; i < 20; i++) expect(await freePort()).toBeLessThan(low);
  });

  it("skips a port something listens on", async () => {
    const taken: ReturnType<typeof createServer>[] = [];
    try {
      // Occupy 50 ports it may choose; each answer must still be bindable.
      const { low } = ephemeralPortRange();
      for (let p = low - 50; p < low; p++) {
        const s = createServer();
        await new Promise<void>((resolve) => {
          s.once("error", () => resolve());
          s.listen(p, "127.0.0.1", () => resolve());
        });
        taken.push(s);
      }
      for (let i = 0; i < 20; i++) {
        const port = await freePort();
        const s = createServer();
        await new Promise<void>((resolve, reject) => {
          s.once("error", reject);
          s.listen(port, "127.0.0.1", resolve);
        });
        await new Promise<void>((resolve) => s.close(() => resolve()));
      }
    } finally {
      await Promise.all(taken.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
    }
  });
});

describe("capstanCacheDir", () => {
  it("follows CAPSTAN_CACHE", () => {
    const before = process.env.CAPSTAN_CACHE;
    process.env.CAPSTAN_CACHE = "/tmp/some-cache";
    try {
      expect(capstanCacheDir()).toBe("/tmp/some-cache");
      delete process.env.CAPSTAN_CACHE;
      expect(capstanCacheDir()).toMatch(/\.cache\/capstan$/);
    } finally {
      if (before === undefined) delete process.env.CAPSTAN_CACHE;
      else process.env.CAPSTAN_CACHE = before;
    }
  });
});

describe("spawnLogged and killAll", () => {
  it("appends output to the log and reports the exit code", async () => {
    const log = join(dir, "exit.log");
    const p = spawnLogged("/bin/sh", ["-c", "echo out; echo err >&2; exit 3"], log);
    expect(await p.exited).toBe(3);
    expect(isRunning(p)).toBe(false);
    expect((await readFile(log, "utf8")).split("\n").sort()).toEqual(["", "err", "out"]);
  });

  it("replaces the environment when given one", async () => {
    const log = join(dir, "env.log");
    const p = spawnLogged("/bin/sh", ["-c", 'echo "[$CAPSTAN_X][$HOME]"'], log, { CAPSTAN_X: "x" });
    expect(await p.exited).toBe(0);
    expect(await readFile(log, "utf8")).toBe("[x][]\n");
  });

  it("kills what still runs and waits for it", async () => {
    const a = spawnLogged("/bin/sh", ["-c", "sleep 60"], join(dir, "a.log"));
    const b = spawnLogged("/bin/sh", ["-c", "exit 0"], join(dir, "b.log"));
    await b.exited;
    expect(isRunning(a)).toBe(true);
    await killAll([a, b]);
    expect(await a.exited).toBe("SIGKILL");
    expect(await b.exited).toBe(0);
  });

  it("a missing binary resolves with the spawn error", async () => {
    const p = spawnLogged(join(dir, "no-such-binary"), [], join(dir, "missing.log"));
    expect(String(await p.exited)).toMatch(/ENOENT/);
  });
});
