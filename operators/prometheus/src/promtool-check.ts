// Runs the real promtool (prometheus-binaries.ts) over what the operator writes: a rendered configuration laid out
// as in the Prometheus pod (`promtool check config`, which checks the rule files it lists too), or one rule file
// (`promtool check rules`). Test support for the *.real.test.ts files, not shipped.
import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import type { RenderedConfig } from "./desired/config.ts";
import { prometheusBinary } from "./prometheus-binaries.ts";

/** promtool's verdict: whether it exited 0, and what it printed (stdout and stderr). */
export interface PromtoolResult {
  ok: boolean;
  output: string;
}

function run(args: string[], binary = prometheusBinary("promtool")): PromtoolResult {
  try {
    const output = execFileSync(binary, args, {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, POD_NAME: "prometheus-main-0" },
    });
    return { ok: true, output };
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string };
    return { ok: false, output: `${e.stdout ?? ""}${e.stderr ?? ""}` };
  }
}

/**
 * `promtool check rules` of the rule file text `text`, written to `file`, with `--enable-feature` for each of
 * `features` (the flags a server would run with); by the image's promtool unless `binary` names another.
 */
export function promtoolCheckRules(
  file: string,
  text: string,
  features: readonly string[] = [],
  binary?: string,
): PromtoolResult {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, text);
  const flags = features.length === 0 ? [] : [`--enable-feature=${features.join(",")}`];
  return run([...flags, "check", "rules", file], binary);
}

/** The `--enable-feature` names a promtool takes (the image's unless `binary` names another), from its `--help`. */
export function promtoolFeatures(binary?: string): string[] {
  const help = run(["--help"], binary).output.replace(/\s+/g, " ");
  const m = /--enable-feature=.*? Valid options: (.*?)\. See/.exec(help);
  if (m?.[1] === undefined) throw new Error(`cannot read the feature names from promtool --help: ${help}`);
  return m[1].split(",").map((f) => f.trim());
}

/** The Prometheus release of a promtool (the image's unless `binary` names another), from `--version` (e.g. "3.16.0"). */
export function promtoolVersion(binary?: string): string {
  const { output } = run(["--version"], binary);
  const m = /version (\d+\.\d+\.\d+)/.exec(output);
  if (m?.[1] === undefined) throw new Error(`cannot read the release from promtool --version: ${output}`);
  return m[1];
}

/**
 * Writes `out` under `root`, standing in for /etc/prometheus (paths rewritten), with its rule files and a
 * placeholder file for every asset and every other file under /etc/prometheus/ it names, and runs
 * `promtool check config` on it (the image's promtool unless `binary` names another).
 */
export function promtoolCheckConfig(root: string, out: RenderedConfig, binary?: string): PromtoolResult {
  const rewrite = (text: string) => text.replaceAll("/etc/prometheus/", `${root}/`);
  mkdirSync(join(root, "config"), { recursive: true });
  mkdirSync(join(root, "rules"), { recursive: true });
  mkdirSync(join(root, "assets"), { recursive: true });
  writeFileSync(join(root, "config", "prometheus.yml"), rewrite(out.yaml));
  for (const [file, text] of Object.entries(out.rules)) writeFileSync(join(root, "rules", file), text);
  // A placeholder for every file the configuration reads (promtool checks they exist): the assets, and files a monitor
  // names itself (tlsConfig.certFile..., allowed by spec.arbitraryFSAccessThroughSMs), when under /etc/prometheus/.
  const named = [...out.yaml.matchAll(/_file: (\/etc\/prometheus\/\S+)/g)].map((m) => m[1] ?? "");
  for (const file of new Set([...out.assets.map((a) => a.path), ...named])) {
    const path = rewrite(file);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, "placeholder\n");
  }
  return run(["check", "config", join(root, "config", "prometheus.yml")], binary);
}
