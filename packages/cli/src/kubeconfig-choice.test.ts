// `npm start` and `npm test` never touch a cluster the user did not choose: e2e/cluster/local/kubeconfig.sh (sourced
// by scripts/start.sh and e2e/run.sh) picks the local cluster even when KUBECONFIG points elsewhere, and KUBECONFIG's
// cluster only with CAPSTAN_USE_KUBECONFIG=1. Runs the real script under bash with each environment.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");
const script = join(root, "e2e/cluster/local/kubeconfig.sh");
const scratch = mkdtempSync(join(tmpdir(), "capstan-kubeconfig-"));
const state = join(scratch, ".cluster");
const work = join(scratch, "work-cluster.yaml");
writeFileSync(work, "apiVersion: v1\nkind: Config\n");

/** What the script chooses: the kubeconfig it prints ("" = the local cluster), its message and exit code. */
function choose(env: Record<string, string>): { chosen: string; message: string; status: number | null } {
  const { HOME: _home, KUBECONFIG: _kc, CAPSTAN_USE_KUBECONFIG: _use, ...base } = process.env;
  const res = spawnSync("bash", ["-c", `source "${script}" && capstan_chosen_kubeconfig "${state}"`], {
    env: { ...base, HOME: scratch, ...env },
    encoding: "utf8",
  });
  return { chosen: res.stdout.trim(), message: res.stderr.trim(), status: res.status };
}

describe("which cluster npm start and npm test use", () => {
  it("uses the local cluster when KUBECONFIG is unset", () => {
    expect(choose({})).toEqual({ chosen: "", message: "", status: 0 });
  });

  it("ignores a KUBECONFIG that points at another cluster, and says so", () => {
    const r = choose({ KUBECONFIG: work });
    expect(r.chosen).toBe("");
    expect(r.status).toBe(0);
    expect(r.message).toContain(`not using KUBECONFIG=${work}`);
    expect(r.message).toContain("CAPSTAN_USE_KUBECONFIG=1");
  });

  it("uses the local cluster's kubeconfig silently", () => {
    expect(choose({ KUBECONFIG: join(state, "kubeconfig") })).toEqual({ chosen: "", message: "", status: 0 });
  });

  it("uses KUBECONFIG's cluster with CAPSTAN_USE_KUBECONFIG=1", () => {
    const r = choose({ KUBECONFIG: work, CAPSTAN_USE_KUBECONFIG: "1" });
    expect(r.chosen).toBe(work);
    expect(r.status).toBe(0);
  });

  it("falls back to ~/.kube/config with CAPSTAN_USE_KUBECONFIG=1 and no KUBECONFIG, and fails without one", () => {
    expect(choose({ CAPSTAN_USE_KUBECONFIG: "1" })).toMatchObject({ chosen: "", status: 1 });
    expect(choose({ CAPSTAN_USE_KUBECONFIG: "1" }).message).toContain("no kubeconfig at");
    const home = join(scratch, ".kube");
    spawnSync("mkdir", ["-p", home]);
    writeFileSync(join(home, "config"), readFileSync(work));
    expect(choose({ CAPSTAN_USE_KUBECONFIG: "1" })).toMatchObject({
      chosen: join(home, "config"),
      status: 0,
    });
  });

  it("is what both entry points use", () => {
    for (const entry of ["scripts/start.sh", "e2e/run.sh"]) {
      const text = readFileSync(join(root, entry), "utf8");
      expect(text, entry).toMatch(/source "[^"]*kubeconfig\.sh"/);
      expect(text, entry).toContain("capstan_chosen_kubeconfig");
    }
  });
});
