// The real Prometheus binaries the "real" tests run: built with the Prometheus image by
// e2e/images/prometheus/build.sh and cached in $CAPSTAN_CACHE/prometheus-<version>/bin (default ~/.cache/capstan),
// the newest version there; or the file CAPSTAN_PROMTOOL / CAPSTAN_PROMETHEUS names. Older releases' promtool alone:
// e2e/images/prometheus/build-promtool.sh, cached in $CAPSTAN_CACHE/promtool-v<version>/promtool. Test support, not
// shipped.
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { capstanCacheDir } from "@capstan/testing";

/** The path of `name` (prometheus or promtool); throws saying how to build it when there is none. */
export function prometheusBinary(name: "prometheus" | "promtool"): string {
  const override = process.env[`CAPSTAN_${name.toUpperCase()}`];
  const found = override
    ? existsSync(override)
      ? override
      : undefined
    : (() => {
        const cache = capstanCacheDir();
        if (!existsSync(cache)) return undefined;
        return readdirSync(cache)
          .filter((d) => d.startsWith("prometheus-v"))
          .sort((a, b) => a.localeCompare(b, "en", { numeric: true }))
          .map((d) => join(cache, d, "bin", name))
          .filter((p) => existsSync(p))
          .at(-1);
      })();
  if (found === undefined) {
    throw new Error(
      `no ${name}: build it with \`bash e2e/images/build-all.sh prometheus\` (cached by version) or set CAPSTAN_${name.toUpperCase()}`,
    );
  }
  return found;
}

/**
 * Older releases whose promtool the tests also run: 3.5.0, the first LTS release (3.0.0, the oldest the CRD accepts,
 * is left out: each promtool is a cold build of about 8 CPU-minutes, and CI's budget is tight).
 */
export const OLDER_PROMTOOL_RELEASES = ["3.5.0"] as const;

/** The promtool of Prometheus `release` (e.g. "3.5.0"); throws saying how to build it when there is none. */
export function promtoolOf(release: string): string {
  const path = join(capstanCacheDir(), `promtool-v${release}`, "promtool");
  if (!existsSync(path)) {
    const [, minor, patch] = release.split(".");
    throw new Error(
      `no promtool ${release}: build it with \`bash e2e/images/prometheus/build-promtool.sh v0.${300 + Number(minor)}.${patch}\` (cached by version)`,
    );
  }
  return path;
}
