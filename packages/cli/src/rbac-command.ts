// `capstan rbac [--check] [--operator <dir>]`: prints the RBAC rules an operator's code needs, or (--check) compares
// them with what its chart grants in each of RBAC_MODES (cluster-wide, namespaced, ...).
import { relative, resolve } from "node:path";
import { parseArgs } from "node:util";
import type { CliIo } from "./cli-io.ts";
import { readOperatorConfig } from "./config.ts";
import { requireHelm } from "./find-helm.ts";
import { DEFAULT_MANAGER_ACCESS, deriveRules, formatRules } from "./rbac.ts";
import { loadAccess, RBAC_MODES, rbacDrift } from "./rbac-check.ts";

const RBAC_USAGE = `Usage: capstan rbac [--check] [--operator <dir>]

Derives the RBAC rules the operator needs from the module named by "rbac" in the "capstan" field of its package.json:
  "capstan": { ..., "rbac": "./src/reconcile/rbac.ts" }   module exporting "access" (an OperatorAccess):
    controllers: () => [the controllers main.ts adds]      read rules of their for/owns/watches kinds, status and
                                                           finalizers of each for kind
    rules: [{ kind, verbs, why }, ...]                     the write verbs per kind, and any other access
plus Events (the recorder), the leader-election Lease and the secure metrics' TokenReviews and SubjectAccessReviews.
Prints them as YAML: one "rules:" list per place they are needed (where the operator watches, cluster-wide, the
Lease's namespace).

Options:
  --check           Render the chart named by "capstan.chart" (helm template: ${RBAC_MODES.map((m) => m.label).join(", ")})
                    and exit 1 naming every rule the code needs that the chart lacks and every rule it grants that
                    the code does not need. Helm: $CAPSTAN_HELM, else the pinned build in ~/.cache/capstan, else PATH
  --operator <dir>  The operator package (default: the current directory); --dir is the same
  -h, --help        Show this help
`;

export async function rbacCommand(args: string[], io: CliIo): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      check: { type: "boolean", default: false },
      operator: { type: "string" },
      dir: { type: "string" },
      help: { type: "boolean", short: "h", default: false },
    },
    strict: true,
    allowPositionals: false,
  });
  if (values.help) {
    io.out(RBAC_USAGE);
    return 0;
  }
  const dir = resolve(io.cwd, values.operator ?? values.dir ?? ".");
  if (!values.check) {
    const access = await loadAccess(readOperatorConfig(dir));
    io.out(formatRules(deriveRules(access, DEFAULT_MANAGER_ACCESS)));
    return 0;
  }
  let helm: string;
  try {
    helm = requireHelm();
  } catch (err) {
    throw new Error(`--check needs helm: ${(err as Error).message}`);
  }
  const problems = await rbacDrift(dir, helm);
  const chart = relative(io.cwd, readOperatorConfig(dir).chart ?? dir) || ".";
  if (problems.length === 0) {
    io.out(
      `capstan rbac: ${chart} grants exactly what the operator needs (${RBAC_MODES.length} renderings)\n`,
    );
    return 0;
  }
  for (const p of problems) io.err(`${p}\n`);
  io.err(
    `capstan rbac --check: ${problems.length} difference(s) between ${chart}'s RBAC and what the operator needs: fix templates/rbac.yaml, or the operator's OperatorAccess (capstan rbac prints what it needs)\n`,
  );
  return 1;
}
