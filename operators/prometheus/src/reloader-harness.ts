// Runs the pods' reloader script (desired/reloader.ts) for real, for the *.real.test.ts files: under the real busybox
// the pods run (Debian's busybox-static, as e2e/images/busybox/build.sh packs it), with the candidate and last-good
// generations written as the kubelet projects them (one file per Secret key, built by the operator's own builders)
// and the live directory a temporary one. Test support, not shipped.

import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readlinkSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { SecretObject } from "@capstan/core";
import { RELOADER_SCRIPT } from "./desired/reloader.ts";

/** The busybox binary: CAPSTAN_BUSYBOX, /bin/busybox or /usr/bin/busybox; throws saying how to get it. */
export function findBusybox(): string {
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

/** The applets the script uses: the PATH of the tests holds these and nothing else. */
const APPLETS = [
  "sh",
  "cat",
  "cp",
  "cut",
  "gunzip",
  "head",
  "ln",
  "mkdir",
  "mv",
  "nc",
  "readlink",
  "rm",
  "sed",
  "sha256sum",
  "sleep",
  "timeout",
  "tr",
  "wget",
];

/** A pod's directories: candidate and last-good (projected volumes) and live (the emptyDir). */
export interface PodDirs {
  root: string;
  bin: string;
  candidate: string;
  lastGood: string;
  live: string;
}

/** Fresh directories under a new temporary root, and a bin directory of busybox applets. */
export function podDirs(busybox: string): PodDirs {
  const root = mkdtempSync(join(tmpdir(), "prom-reloader-"));
  const dirs: PodDirs = {
    root,
    bin: join(root, "bin"),
    candidate: join(root, "candidate"),
    lastGood: join(root, "last-good"),
    live: join(root, "live"),
  };
  for (const d of [dirs.bin, dirs.candidate, dirs.lastGood, dirs.live]) mkdirSync(d);
  for (const applet of APPLETS) symlinkSync(busybox, join(dirs.bin, applet));
  return dirs;
}

/**
 * Projects `secrets` into `dir` as the kubelet does: every key a file in a new `..<n>` directory, `..data` renamed to
 * it, and one link per key into `..data`; keys of the previous projection that are gone disappear.
 */
let projections = 0;
export function project(dir: string, secrets: readonly SecretObject[]): void {
  const gen = `..${++projections}`;
  mkdirSync(join(dir, gen));
  const keys: string[] = [];
  for (const s of secrets) {
    for (const [k, v] of Object.entries(s.data ?? {})) {
      writeFileSync(join(dir, gen, k), Buffer.from(v, "base64"));
      keys.push(k);
    }
  }
  symlinkSync(gen, join(dir, "..data_tmp"));
  execFileSync("mv", ["-T", join(dir, "..data_tmp"), join(dir, "..data")]);
  for (const k of keys) if (!existsSync(join(dir, k))) symlinkSync(join("..data", k), join(dir, k));
  execFileSync("sh", [
    "-c",
    `cd "${dir}" && for f in *; do [ -e "$f" ] || rm -f "$f"; done; for d in ..[0-9]*; do [ "$d" = "${gen}" ] || rm -rf "$d"; done`,
  ]);
}

/** Environment of the script for `dirs`, Prometheus at 127.0.0.1:`port`. */
export function reloaderEnv(
  dirs: PodDirs,
  port: number,
  extra: Record<string, string> = {},
): NodeJS.ProcessEnv {
  return {
    PATH: dirs.bin,
    LIVE_DIR: dirs.live,
    CANDIDATE_DIR: dirs.candidate,
    LAST_GOOD_DIR: dirs.lastGood,
    PROMETHEUS_PORT: String(port),
    CHECK_SECONDS: "0.2",
    ...extra,
  };
}

/** The init container: `sh -c RELOADER_SCRIPT reloader once`, to the end; its output. */
export function runOnce(busybox: string, env: NodeJS.ProcessEnv, timeoutMs = 10_000): string {
  return execFileSync(busybox, ["sh", "-c", RELOADER_SCRIPT, "reloader", "once"], {
    env,
    encoding: "utf8",
    timeout: timeoutMs,
  });
}

/** The init container, started (for a test that it waits). */
export function startOnce(busybox: string, env: NodeJS.ProcessEnv): ChildProcess {
  return spawn(busybox, ["sh", "-c", RELOADER_SCRIPT, "reloader", "once"], { env, stdio: "pipe" });
}

/** The sidecar, started; its output collects in `log`. */
export function startReloader(busybox: string, env: NodeJS.ProcessEnv, log: string[]): ChildProcess {
  const child = spawn(busybox, ["sh", "-c", RELOADER_SCRIPT, "reloader"], { env, stdio: "pipe" });
  child.stdout?.on("data", (d: Buffer) => log.push(...d.toString().split("\n").filter(Boolean)));
  child.stderr?.on("data", (d: Buffer) => log.push(...d.toString().split("\n").filter(Boolean)));
  return child;
}

/** The reloader's state file, parsed (empty fields when absent). */
export function readState(live: string): { accepted: string; refused: string; message: string } {
  let text = "";
  try {
    text = readFileSync(join(live, "reloader", "state"), "utf8");
  } catch {
    // none yet
  }
  const field = (k: string) => text.match(new RegExp(`^${k}=(.*)$`, "m"))?.[1] ?? "";
  return { accepted: field("accepted"), refused: field("refused"), message: field("message") };
}

/** The generation id `..data` names in the live directory ("" when none). */
export function liveGeneration(live: string): string {
  try {
    return readlinkSync(join(live, "..data")).replace(/^\.\.gen-/, "");
  } catch {
    return "";
  }
}

/** Polls `ok` every 50 ms for up to `ms`; throws naming `what` (and `detail()`) if it never holds. */
export async function until(what: string, ok: () => boolean, ms = 15_000, detail = () => ""): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (ok()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`never reached: ${what} ${detail()}`);
}

/** Removes a temporary root. */
export function cleanup(dirs: PodDirs | undefined): void {
  if (dirs !== undefined) rmSync(dirs.root, { recursive: true, force: true });
}
