// The last-good scheme with the real Prometheus (issue 29, item 5): the reloader script (reloader.ts) under the real
// busybox, beside the real prometheus binary (e2e/images/prometheus/build.sh caches it), reading the generations the
// operator's builders write. A generation Prometheus refuses (a rule that slipped past the operator's checks) leaves
// the running server on the last good one, in memory and on disk; a container restart (an OOM kill) starts from the
// last good one instead of crash-looping; a recreated pod (a new emptyDir) starts from the last-good copy, not the
// refused candidate, and its reloader says so at /user/state; the fix is then loaded. The "real" project (`npm run
// test:real`): fails without busybox or prometheus, saying how to get them.

import type { ChildProcess } from "node:child_process";
import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { SecretObject } from "@capstan/core";
import { freePort, killAll, type LoggedProcess, spawnLogged } from "@capstan/testing";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { prometheusBinary } from "../prometheus-binaries.ts";
import { parseReloaderState } from "../reconcile/reload.ts";
import {
  cleanup,
  findBusybox,
  type PodDirs,
  podDirs,
  project,
  readState,
  reloaderEnv,
  runOnce,
  startReloader,
  until,
} from "../reloader-harness.ts";
import { prometheus } from "./config-fixtures.ts";
import { configSecret, lastGoodSecrets, ruleShardSecrets } from "./objects/secrets.ts";
import { GENERATION_ANNOTATION } from "./objects.ts";

const server = prometheus();
server.metadata.uid = "9b1c0f5e-0000-4000-8000-000000000001";

let dirs: PodDirs | undefined;
let processes: LoggedProcess[] = [];
const reloaderLog: string[] = [];

afterEach(async () => {
  await killAll(processes);
  processes = [];
});
afterAll(() => {
  if (process.env.KEEP_DIRS !== "1") cleanup(dirs);
});

/** A started child as killAll takes it. */
function logged(child: ChildProcess): LoggedProcess {
  return {
    process: child,
    exited: new Promise((resolve) =>
      child.once("exit", (code, signal) => resolve(code ?? signal ?? "unknown")),
    ),
  };
}

/**
 * A generation whose prometheus.yml reads its rule file and a credential file from the live directory `live` (as the
 * operator's reads them from /etc/prometheus), with one rule group `a`: `rules` is the group's rules as YAML.
 */
function generation(live: string, port: number, rules: string): { secrets: SecretObject[]; id: string } {
  const yaml = [
    "global:",
    "  scrape_interval: 1s",
    "  evaluation_interval: 1s",
    "rule_files:",
    `  - ${live}/rules/monitoring_a.yaml`,
    "scrape_configs:",
    "  - job_name: self",
    "    authorization:",
    `      credentials_file: ${live}/assets/secret_monitoring_token_t`,
    "    static_configs:",
    `      - targets: ["127.0.0.1:${port}"]`,
    "",
  ].join("\n");
  const ruleFiles = { "monitoring_a.yaml": `groups:\n  - name: a\n    rules:\n${rules}` };
  const secret = configSecret(
    server,
    { yaml, rules: ruleFiles, assets: [], hash: "h" },
    { secret_monitoring_token_t: Buffer.from("token").toString("base64") },
  );
  return {
    secrets: [secret, ...ruleShardSecrets(server, [ruleFiles])],
    id: secret.metadata.annotations?.[GENERATION_ANNOTATION] ?? "",
  };
}

describe("a refused configuration, with the real Prometheus", () => {
  it("leaves the server on the last good one, and a restart or a new pod starts from it", async () => {
    const busybox = findBusybox();
    const binary = prometheusBinary("prometheus");
    const d = podDirs(busybox);
    dirs = d;
    const port = await freePort();
    const api = `http://127.0.0.1:${port}`;
    const env = reloaderEnv(d, port, { PROMETHEUS_VERSION: "3.16.0" });
    const startPrometheus = () => {
      const p = spawnLogged(
        binary,
        [
          `--config.file=${d.live}/config/prometheus.yml`,
          `--storage.tsdb.path=${join(d.root, "data")}`,
          `--web.listen-address=127.0.0.1:${port}`,
          "--web.enable-lifecycle",
          `--web.user-assets=${d.live}/reloader`,
        ],
        join(d.root, "prometheus.log"),
      );
      processes.push(p);
      return p;
    };
    const ruleNames = async (): Promise<string[]> => {
      const res = await fetch(`${api}/api/v1/rules`);
      const body = (await res.json()) as { data: { groups: { rules: { name: string }[] }[] } };
      return body.data.groups.flatMap((g) => g.rules.map((r) => r.name));
    };
    const isReady = async () => {
      try {
        return (await fetch(`${api}/-/ready`)).ok;
      } catch {
        return false;
      }
    };
    const readyWithin = async (what: string) => {
      for (let i = 0; i < 300; i++) {
        if (await isReady()) return;
        await new Promise((r) => setTimeout(r, 100));
      }
      throw new Error(`Prometheus never ready: ${what} (log: ${join(d.root, "prometheus.log")})`);
    };
    const log = () => reloaderLog.join("\n");

    const good = generation(d.live, port, "      - record: good:one\n        expr: count(up)\n");
    // rate() of an instant vector: Prometheus refuses the rule file, so the whole reload.
    const bad = generation(d.live, port, "      - record: bad:one\n        expr: rate(up)\n");
    const fixed = generation(d.live, port, "      - record: good:two\n        expr: sum(up)\n");

    // First start: the candidate; accepted once Prometheus is up.
    project(d.candidate, good.secrets);
    runOnce(busybox, env);
    let prom = startPrometheus();
    await readyWithin("first start");
    processes.push(logged(startReloader(busybox, env, reloaderLog)));
    await until("the first generation accepted", () => readState(d.live).accepted === good.id, 20_000, log);
    expect(await ruleNames()).toEqual(["good:one"]);

    // The refused generation: swapped back out; the server keeps running the good one.
    project(d.candidate, bad.secrets);
    await until("the bad generation refused", () => readState(d.live).refused === bad.id, 20_000, log);
    expect(readState(d.live)).toMatchObject({ accepted: good.id, refused: bad.id });
    // Prometheus answers the reload with a summary (the rule error itself is in its log, which the operator reads).
    expect(readState(d.live).message).toMatch(/^failed to reload config: one or more errors occurred/);
    expect(await ruleNames()).toEqual(["good:one"]);
    const runtime = (await (await fetch(`${api}/api/v1/status/runtimeinfo`)).json()) as {
      data: { reloadConfigSuccess: boolean };
    };
    expect(runtime.data.reloadConfigSuccess).toBe(false);
    // What the operator reads, served by Prometheus itself.
    const served = parseReloaderState(await (await fetch(`${api}/user/state`)).text());
    expect(served).toMatchObject({ accepted: good.id, refused: bad.id });

    // An OOM kill: the container restarts on the same emptyDir and starts from the good generation.
    prom.process.kill("SIGKILL");
    await prom.exited;
    prom = startPrometheus();
    await readyWithin("restart after a refused reload");
    expect(await ruleNames()).toEqual(["good:one"]);

    // The pod recreated (an upgrade, a node drain): a new emptyDir, the candidate still the refused generation, and
    // the operator's last-good copy of the good one.
    await killAll(processes);
    processes = [];
    rmSync(d.live, { recursive: true });
    rmSync(join(d.root, "data"), { recursive: true });
    mkdirSync(d.live);
    const [goodSecret, ...goodShards] = good.secrets;
    if (goodSecret === undefined) throw new Error("no config Secret");
    const lg = lastGoodSecrets(server, goodSecret, goodShards, "3.16.0");
    project(d.lastGood, [lg.secret, ...lg.shards]);
    expect(runOnce(busybox, env)).toContain(`starting from the last good generation ${good.id}`);
    startPrometheus();
    await readyWithin("a new pod");
    expect(await ruleNames()).toEqual(["good:one"]);
    processes.push(logged(startReloader(busybox, env, reloaderLog)));
    await until(
      "the new pod's reloader refuses the bad candidate too",
      () => readState(d.live).refused === bad.id,
      20_000,
      log,
    );
    expect(await ruleNames()).toEqual(["good:one"]);

    // The fix: loaded.
    project(d.candidate, fixed.secrets);
    await until("the fix accepted", () => readState(d.live).accepted === fixed.id, 20_000, log);
    expect(await ruleNames()).toEqual(["good:two"]);
    expect(readState(d.live)).toEqual({ accepted: fixed.id, refused: "", message: "" });
  }, 120_000);
});
