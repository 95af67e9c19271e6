// The reloader script (reloader.ts) under the real busybox the pods run (the local cluster's capstan.local/busybox:1 is
// Debian's busybox-static: e2e/images/busybox/build.sh), on real files: candidate and last-good generations written
// as the kubelet projects them, from the operator's own builders, and an HTTP server standing for Prometheus's
// /-/ready and /-/reload (answering 200, refusing with 500 and Prometheus's message, or not answering). Proves which
// generation the init container starts from, that only an accepted generation stays in the live directory, that a
// refused one is reported and not retried until the candidate changes, and the partial deliveries it waits out.
// lastgood.real.test.ts runs the same script with the real Prometheus. And it ends at once on SIGTERM as its
// container's PID 1 (run as PID 1 of a new PID namespace: unshare, as root).

import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { readFileSync, renameSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import type { SecretObject } from "@capstan/core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  cleanup,
  findBusybox,
  liveGeneration,
  type PodDirs,
  podDirs,
  project,
  readState,
  reloaderEnv,
  runOnce,
  startOnce,
  startReloader,
  until,
} from "../reloader-harness.ts";
import { prometheus } from "./config-fixtures.ts";
import { configSecret, lastGoodSecrets, ruleShardSecrets } from "./objects/secrets.ts";
import { GENERATION_ANNOTATION, RELOADER_SCRIPT } from "./objects.ts";

const server = prometheus();
server.metadata.uid = "9b1c0f5e-0000-4000-8000-000000000001";

/** A generation as the operator writes it: the config Secret and one rule shard. */
function generation(
  tag: string,
  rules: Record<string, string> = { "monitoring_a.yaml": `# ${tag}\ngroups: []\n` },
): { secrets: SecretObject[]; id: string } {
  const secret = configSecret(
    server,
    { yaml: `# ${tag}\nglobal: {}\n`, rules, assets: [], hash: tag },
    { secret_monitoring_token_t: Buffer.from(`token-${tag}`).toString("base64") },
  );
  return {
    secrets: [secret, ...ruleShardSecrets(server, [rules])],
    id: secret.metadata.annotations?.[GENERATION_ANNOTATION] ?? "",
  };
}

function lastGood(g: { secrets: SecretObject[] }, version: string): SecretObject[] {
  const [secret, ...shards] = g.secrets;
  if (secret === undefined) throw new Error("no config Secret");
  const lg = lastGoodSecrets(server, secret, shards, version);
  return [lg.secret, ...lg.shards];
}

/** What the fake Prometheus answers next to POST /-/reload. */
type Answer = "ok" | "refuse" | "hang-up";

let busybox = "";
let http: Server;
let port = 0;
let ready = true;
let answers: Answer[] = [];
/** Each reload: the prometheus.yml and rule file in the live directory when Prometheus would read them. */
let reloads: string[] = [];
let dirs: PodDirs | undefined;
let children: ChildProcess[] = [];

beforeAll(async () => {
  busybox = findBusybox();
  http = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      if (req.url === "/-/ready") {
        res.writeHead(ready ? 200 : 503).end();
        return;
      }
      const live = dirs?.live ?? "";
      const read = (f: string) => {
        try {
          return readFileSync(join(live, f), "utf8").split("\n")[0];
        } catch {
          return "(none)";
        }
      };
      reloads.push(`${read("config/prometheus.yml")} ${read("rules/monitoring_a.yaml")}`);
      const answer = answers.shift() ?? "ok";
      if (answer === "hang-up") req.socket.destroy();
      else if (answer === "refuse")
        res
          .writeHead(500)
          .end(
            'failed to reload config: one or more errors occurred while applying the new configuration (--config.file="/etc/prometheus/config/prometheus.yml")\n',
          );
      else res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  port = (http.address() as AddressInfo).port;
});

afterAll(async () => {
  await new Promise((resolve) => http?.close(resolve));
});

afterEach(() => {
  for (const c of children) c.kill("SIGKILL");
  children = [];
  cleanup(dirs);
  dirs = undefined;
  ready = true;
  answers = [];
  reloads = [];
});

const live = (f: string) => readFileSync(join(dirs?.live ?? "", f), "utf8");

function pod(): PodDirs {
  dirs = podDirs(busybox);
  return dirs;
}

describe("the init container (once)", () => {
  it("first start, no last-good: the candidate, unpacked with its rule and asset files, not yet accepted", () => {
    const d = pod();
    const g1 = generation("g1");
    project(d.candidate, g1.secrets);
    const out = runOnce(busybox, reloaderEnv(d, port, { PROMETHEUS_VERSION: "3.16.0" }));
    expect(out).toContain(`starting from generation ${g1.id}, not yet accepted`);
    expect(live("config/prometheus.yml")).toBe("# g1\nglobal: {}\n");
    expect(live("rules/monitoring_a.yaml")).toBe("# g1\ngroups: []\n");
    expect(live("assets/secret_monitoring_token_t")).toBe("token-g1");
    expect(liveGeneration(d.live)).toBe(g1.id);
    expect(readState(d.live).accepted).toBe("");
    expect(reloads).toEqual([]);
  });

  it("starts from the last-good generation of its Prometheus version, never the unverified candidate", () => {
    const d = pod();
    const good = generation("good");
    project(d.lastGood, lastGood(good, "3.16.0"));
    project(d.candidate, generation("bad").secrets);
    const out = runOnce(busybox, reloaderEnv(d, port, { PROMETHEUS_VERSION: "3.16.0" }));
    expect(out).toContain(`starting from the last good generation ${good.id}`);
    expect(live("config/prometheus.yml")).toBe("# good\nglobal: {}\n");
    expect(live("rules/monitoring_a.yaml")).toBe("# good\ngroups: []\n");
    expect(live("assets/secret_monitoring_token_t")).toBe("token-good");
    expect(readState(d.live).accepted).toBe(good.id);
  });

  it("after a version change the candidate goes first (the last-good was proven on another version)", () => {
    const d = pod();
    project(d.lastGood, lastGood(generation("old"), "3.15.0"));
    const cand = generation("new");
    project(d.candidate, cand.secrets);
    runOnce(busybox, reloaderEnv(d, port, { PROMETHEUS_VERSION: "3.16.0" }));
    expect(liveGeneration(d.live)).toBe(cand.id);
    expect(live("config/prometheus.yml")).toBe("# new\nglobal: {}\n");
  });

  it("keeps the generation this pod already accepted (a sandbox restart keeps the emptyDir)", async () => {
    const d = pod();
    const g1 = generation("g1");
    project(d.candidate, g1.secrets);
    runOnce(busybox, reloaderEnv(d, port));
    const log: string[] = [];
    const r = startReloader(busybox, reloaderEnv(d, port), log);
    children.push(r);
    await until("g1 accepted", () => readState(d.live).accepted === g1.id);
    r.kill("SIGKILL");
    project(d.lastGood, lastGood(generation("older"), ""));
    project(d.candidate, generation("g2").secrets);
    expect(runOnce(busybox, reloaderEnv(d, port))).toContain(`keeping generation ${g1.id}`);
    expect(live("config/prometheus.yml")).toBe("# g1\nglobal: {}\n");
  });

  it("waits while the candidate is delivered in part (a rule shard older than the config Secret), then starts", async () => {
    const d = pod();
    const g2 = generation("g2", { "monitoring_a.yaml": "# g2\ngroups: []\n" });
    const g1 = generation("g1", { "monitoring_a.yaml": "# g1\ngroups: []\n" });
    // The config Secret of g2 with g1's rule shard: the checksums do not match.
    project(d.candidate, [g2.secrets[0] as SecretObject, g1.secrets[1] as SecretObject]);
    const init = startOnce(busybox, reloaderEnv(d, port));
    children.push(init);
    let out = "";
    init.stdout?.on("data", (b: Buffer) => {
      out += b.toString();
    });
    const exited = new Promise<number | null>((resolve) => init.on("exit", resolve));
    await until("the init container says it waits", () => out.includes("waiting"));
    expect(liveGeneration(d.live)).toBe("");
    project(d.candidate, g2.secrets);
    expect(await exited).toBe(0);
    expect(liveGeneration(d.live)).toBe(g2.id);
    expect(live("rules/monitoring_a.yaml")).toBe("# g2\ngroups: []\n");
  });
});

describe("the sidecar", () => {
  async function running(tag = "g1"): Promise<{ d: PodDirs; log: string[]; g1: { id: string } }> {
    const d = pod();
    const g1 = generation(tag);
    project(d.candidate, g1.secrets);
    runOnce(busybox, reloaderEnv(d, port));
    const log: string[] = [];
    children.push(startReloader(busybox, reloaderEnv(d, port), log));
    await until("Prometheus started with g1", () => readState(d.live).accepted === g1.id);
    return { d, log, g1 };
  }

  it("installs a new candidate and keeps it when Prometheus accepts it; the old generation is removed", async () => {
    const { d, log, g1 } = await running();
    expect(reloads).toEqual([]);
    const g2 = generation("g2");
    project(d.candidate, g2.secrets);
    await until(
      "g2 accepted",
      () => readState(d.live).accepted === g2.id,
      15_000,
      () => log.join("\n"),
    );
    expect(reloads).toEqual(["# g2 # g2"]);
    expect(live("config/prometheus.yml")).toBe("# g2\nglobal: {}\n");
    expect(liveGeneration(d.live)).toBe(g2.id);
    expect(execFileSync("ls", ["-a", d.live], { encoding: "utf8" })).not.toContain(`..gen-${g1.id}`);
    // Unchanged afterwards: no further reload.
    await new Promise((r) => setTimeout(r, 800));
    expect(reloads).toHaveLength(1);
  });

  it("a refused generation is swapped back out, reported with Prometheus's words, not retried until the candidate changes; a revert clears it", async () => {
    const { d, log, g1 } = await running();
    answers = ["refuse"];
    const bad = generation("bad");
    project(d.candidate, bad.secrets);
    await until(
      "bad refused",
      () => readState(d.live).refused === bad.id,
      15_000,
      () => log.join("\n"),
    );
    // Prometheus read the bad files during the reload; they are gone from the live directory since.
    expect(reloads).toEqual(["# bad # bad"]);
    expect(live("config/prometheus.yml")).toBe("# g1\nglobal: {}\n");
    expect(live("rules/monitoring_a.yaml")).toBe("# g1\ngroups: []\n");
    expect(live("assets/secret_monitoring_token_t")).toBe("token-g1");
    expect(readState(d.live)).toEqual({
      accepted: g1.id,
      refused: bad.id,
      message: expect.stringContaining("failed to reload config: one or more errors"),
    });
    await new Promise((r) => setTimeout(r, 800));
    expect(reloads).toHaveLength(1);
    // Reverted: the candidate is the accepted generation again; one reload clears Prometheus's failed status.
    project(d.candidate, generation("g1").secrets);
    await until(
      "the refusal cleared",
      () => readState(d.live).refused === "",
      15_000,
      () => log.join("\n"),
    );
    expect(reloads).toEqual(["# bad # bad", "# g1 # g1"]);
    expect(readState(d.live)).toEqual({ accepted: g1.id, refused: "", message: "" });
    // The change again, then the fix: a new candidate is tried, and accepted.
    answers = ["refuse"];
    project(d.candidate, bad.secrets);
    await until(
      "bad refused again",
      () => readState(d.live).refused === bad.id,
      15_000,
      () => log.join("\n"),
    );
    const fixed = generation("fixed");
    project(d.candidate, fixed.secrets);
    await until("fixed accepted", () => readState(d.live).accepted === fixed.id);
    expect(readState(d.live)).toEqual({ accepted: fixed.id, refused: "", message: "" });
  });

  it("no answer to the reload: swapped back, and retried until Prometheus answers", async () => {
    const { d, log, g1 } = await running();
    answers = ["hang-up", "hang-up"];
    const g2 = generation("g2");
    project(d.candidate, g2.secrets);
    await until(
      "two hang-ups, then accepted",
      () => readState(d.live).accepted === g2.id,
      15_000,
      () => log.join("\n"),
    );
    expect(reloads).toEqual(["# g2 # g2", "# g2 # g2", "# g2 # g2"]);
    expect(log.filter((l) => l.includes("no answer"))).toHaveLength(2);
    expect(g1.id).not.toBe(g2.id);
  });

  it("nothing is tried while Prometheus is not ready (starting, replaying its WAL)", async () => {
    const { d } = await running();
    ready = false;
    project(d.candidate, generation("g2").secrets);
    await new Promise((r) => setTimeout(r, 1_000));
    expect(reloads).toEqual([]);
    ready = true;
    await until("g2 reloaded", () => reloads.length === 1);
  });

  it("a candidate delivered in part is not installed; its completion is", async () => {
    const { d, log, g1 } = await running();
    const g2 = generation("g2", { "monitoring_a.yaml": "# g2\ngroups: []\n" });
    project(d.candidate, [g2.secrets[0] as SecretObject, generation("g1").secrets[1] as SecretObject]);
    await until("it says it waits", () => log.some((l) => l.includes("not complete yet")));
    expect(reloads).toEqual([]);
    expect(readState(d.live).accepted).toBe(g1.id);
    project(d.candidate, g2.secrets);
    await until("g2 accepted", () => readState(d.live).accepted === g2.id);
  });

  it("a reloader stopped between the swap and the answer puts the accepted generation back when it starts", async () => {
    const { d, log, g1 } = await running();
    for (const c of children) c.kill("SIGKILL");
    children = [];
    // The swap done, the reloader gone before Prometheus answered: ..data names an unverified generation.
    const g2 = generation("g2");
    const other = pod();
    project(other.candidate, g2.secrets);
    runOnce(busybox, reloaderEnv(other, port));
    renameSync(join(other.live, `..gen-${g2.id}`), join(d.live, `..gen-${g2.id}`));
    execFileSync("sh", ["-c", `cd "${d.live}" && ln -sfn ..gen-${g2.id} ..data`]);
    cleanup(other);
    dirs = d;
    ready = false; // Prometheus not ready: the new reloader must not try anything but the put-back.
    children.push(startReloader(busybox, reloaderEnv(d, port), log));
    await until("g1 back in place", () => liveGeneration(d.live) === g1.id);
    expect(live("config/prometheus.yml")).toBe("# g1\nglobal: {}\n");
  });
});

describe("the reloader as its container's PID 1", () => {
  it("ends on SIGTERM without waiting out its check interval", async () => {
    const d = pod();
    project(d.candidate, generation("g1").secrets);
    runOnce(busybox, reloaderEnv(d, port));
    // unshare: a new PID namespace whose PID 1 is sh (util-linux; root, as CI and the e2e node run).
    const pid1 = spawn(
      "/usr/bin/unshare",
      ["--pid", "--fork", busybox, "sh", "-c", RELOADER_SCRIPT, "reloader"],
      { env: reloaderEnv(d, port, { CHECK_SECONDS: "600" }), stdio: "ignore" },
    );
    children.push(pid1);
    const exited = new Promise<number | null>((resolve) => pid1.on("exit", (code) => resolve(code)));
    // The namespace's PID 1 is unshare's child: its host pid, once it has saved its first state.
    let shPid = "";
    await until("the PID 1 reloader running", () => {
      try {
        shPid = execFileSync("pgrep", ["-P", String(pid1.pid)])
          .toString()
          .trim();
      } catch {
        shPid = "";
      }
      return shPid !== "" && readState(d.live).accepted !== "";
    });
    await new Promise((r) => setTimeout(r, 500)); // into its sleep
    process.kill(Number(shPid), "SIGTERM");
    const code = await Promise.race([
      exited,
      new Promise<"still running">((r) => setTimeout(() => r("still running"), 10_000)),
    ]);
    expect(code).toBe(0);
  });
});
