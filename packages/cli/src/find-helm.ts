/**
 * @capstan/cli/helm: the one rule by which every Capstan tool finds the helm binary: the CLI's chart commands and
 * the chart tests (@capstan/cli/chart re-exports it), the end-to-end suites' Helm releases (@capstan/testing), and
 * the shell scripts (e2e/run.sh, scripts/start.sh, e2e/cluster/kind/run.sh, through find-helm-main.ts). In order:
 *
 * 1. `$CAPSTAN_HELM`: a path, or a command name looked up on PATH (`CAPSTAN_HELM=helm`). When it is set, nothing
 *    else is tried: a mistyped path is reported, never silently replaced by another helm.
 * 2. The local cluster's build: `$CAPSTAN_CACHE` (default ~/.cache/capstan) `/helm-<HELM_VERSION>/bin/helm`, with the
 *    HELM_VERSION that e2e/cluster/local/versions.env pins (in a Capstan checkout: the first such file above this
 *    module), i.e. what `bash e2e/cluster/local/build.sh helm` builds and the CI release job runs.
 * 3. `helm` on PATH.
 *
 * @module @capstan/cli/helm
 */

import { accessSync, constants, existsSync, readFileSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { delimiter, dirname, isAbsolute, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** What to do when no helm is found, for error messages and test warnings. */
export const HELM_LOOKUP_HINT =
  "set CAPSTAN_HELM to a helm binary (or a command name on PATH), build the local cluster's (bash e2e/cluster/local/build.sh helm, into ~/.cache/capstan), or put helm on PATH";

/** Where the lookup looks, in order of preference, and what it found there. */
export interface HelmCandidate {
  /** "CAPSTAN_HELM", "cache" or "PATH". */
  source: "CAPSTAN_HELM" | "cache" | "PATH";
  /** The binary's path (for CAPSTAN_HELM, what it names; for the cache, where the pinned version would be). */
  path: string;
  /** Whether it is an executable file. */
  found: boolean;
}

/**
 * The e2e/cluster/local/versions.env of the Capstan checkout this module is in (the first above it), or null outside
 * one (e.g. @capstan/cli installed from npm into another project).
 */
export function checkoutVersionsEnv(from = dirname(fileURLToPath(import.meta.url))): string | null {
  for (let dir = resolve(from); ; dir = dirname(dir)) {
    const file = join(dir, "e2e", "cluster", "local", "versions.env");
    if (existsSync(file)) return file;
    if (dirname(dir) === dir) return null;
  }
}

/** The HELM_VERSION a versions.env file pins (`HELM_VERSION=v3.22.0`, quotes allowed); undefined when it has none. */
export function pinnedHelmVersion(versionsEnv: string): string | undefined {
  const line = /^\s*(?:export\s+)?HELM_VERSION=["']?([^"'\s#]+)["']?/m.exec(
    readFileSync(versionsEnv, "utf8"),
  );
  return line?.[1];
}

/**
 * The places the lookup tries, in order, each with whether a helm is there. With CAPSTAN_HELM set, it is the only
 * candidate. `versionsEnv` is the file that pins HELM_VERSION (default: {@link checkoutVersionsEnv}; null: none, so
 * the cache is not looked at).
 */
export function helmCandidates(
  env: NodeJS.ProcessEnv = process.env,
  versionsEnv: string | null = checkoutVersionsEnv(),
): HelmCandidate[] {
  const named = env.CAPSTAN_HELM;
  if (named !== undefined && named !== "") {
    const path = named.includes("/") ? named : (onPath(named, env) ?? named);
    return [{ source: "CAPSTAN_HELM", path, found: executable(path) }];
  }
  const candidates: HelmCandidate[] = [];
  const version = versionsEnv === null ? undefined : pinnedHelmVersion(versionsEnv);
  if (version !== undefined) {
    const cache = env.CAPSTAN_CACHE || join(env.HOME || homedir(), ".cache", "capstan");
    const path = join(cache, `helm-${version}`, "bin", "helm");
    candidates.push({ source: "cache", path, found: executable(path) });
  }
  const fromPath = onPath("helm", env);
  if (fromPath !== undefined) candidates.push({ source: "PATH", path: fromPath, found: true });
  return candidates;
}

/**
 * The helm binary (see the module's rule), or undefined when there is none, so a test can skip with a warning.
 * `versionsEnv` is the file that pins HELM_VERSION (default: the checkout's e2e/cluster/local/versions.env).
 */
export function findHelm(
  env: NodeJS.ProcessEnv = process.env,
  versionsEnv: string | null = checkoutVersionsEnv(),
): string | undefined {
  return helmCandidates(env, versionsEnv).find((c) => c.found)?.path;
}

/** {@link findHelm}, or an error that says what was tried and what to do. */
export function requireHelm(
  env: NodeJS.ProcessEnv = process.env,
  versionsEnv: string | null = checkoutVersionsEnv(),
): string {
  const candidates = helmCandidates(env, versionsEnv);
  const found = candidates.find((c) => c.found);
  if (found !== undefined) return found.path;
  const named = env.CAPSTAN_HELM;
  if (named !== undefined && named !== "") {
    throw new Error(`no helm binary: CAPSTAN_HELM=${named} is not an executable file (or a command on PATH)`);
  }
  const tried = candidates.map((c) => c.path);
  throw new Error(
    `no helm binary${tried.length > 0 ? ` (not at ${tried.join(", ")})` : ""}: ${HELM_LOOKUP_HINT}`,
  );
}

/** The first executable `name` in the directories of env.PATH. */
function onPath(name: string, env: NodeJS.ProcessEnv): string | undefined {
  for (const dir of (env.PATH ?? "").split(delimiter)) {
    if (dir === "" || !isAbsolute(dir)) continue;
    const path = join(dir, name);
    if (executable(path)) return path;
  }
  return undefined;
}

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}
