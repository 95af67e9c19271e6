// The `capstan` command line: parses arguments (node:util parseArgs) and runs a command; main.ts calls it.
import { join, relative, resolve } from "node:path";
import { parseArgs } from "node:util";
import { chartImage } from "./chart-image.ts";
import { operatorChartDirs, packageChart } from "./chart-package.ts";
import type { CliIo } from "./cli-io.ts";
import { formatDrift, planCrdFiles, planDrift, writePlan } from "./crd-files.ts";
import { requireHelm } from "./find-helm.ts";
import { writeNewOperator, writeStandaloneOperator } from "./new-operator.ts";
import { rbacCommand } from "./rbac-command.ts";

export type { CliIo } from "./cli-io.ts";

const USAGE = `Usage: capstan <command> [options]

Commands:
  chart package Package operator charts (helm package) with the capstan-operator library chart inside
  chart image   Print the image an operator chart runs with its default values (what a release pushes)
  crd           Generate an operator's CRD YAML, Markdown reference, chart CRD copies, values schema and README
                values table
  new operator  Make a new operator: workspace, chart, image build, e2e suite and docs page
  rbac          Print the RBAC rules an operator's code needs; --check compares them with its chart

Run "capstan <command> --help" for a command's options.
`;

const CRD_USAGE = `Usage: capstan crd [--check] [--dir <path>]

Reads the "capstan" field of the operator's package.json:
  "capstan": {
    "crds": "./src/api/crds.ts",                 module exporting "crds": CustomResourceDefinition objects
    "crdDir": "./crds",                          optional (default ./crds): <plural>.<group>.yaml per CRD
    "docs": "../../docs/operators/<name>.md",    optional: page with each kind's reference between
                                                 <!-- BEGIN GENERATED: <Kind> reference --> and
                                                 <!-- END GENERATED: <Kind> reference -->
    "chart": "../../charts/<name>-operator"      optional: chart whose templates/crds/ gets each CRD
  }                                              behind crds.enabled, with helm.sh/resource-policy: keep
                                                 (one annotated capstan.dev/install-if-absent goes to
                                                 Helm's crds/ as it is, installed only where absent);
                                                 on the capstan-operator library chart, also its
                                                 values.schema.json and README.md's values table (between
                                                 <!-- BEGIN GENERATED: values reference --> and
                                                 <!-- END GENERATED: values reference -->), described by
                                                 the comments of its values.yaml
and writes every file that differs from what it generates; .yaml files in crds/ and the chart's
templates/crds/ and crds/ that no declared CRD generates are removed.

Options:
  --check         Write nothing; exit 1 naming each missing, stale or unexpected file (for CI)
  --dir <path>    The operator package (default: the current directory)
  -h, --help      Show this help
`;

const CHART_USAGE = `Usage: capstan chart package [--out <dir>] [<chart dir>...]
       capstan chart image [<chart dir>...]

package: runs helm package on each chart (default: every chart under ./charts built on the capstan-operator library) and
writes <out>/<name>-<version>.tgz, checking that the archive holds each dependency under charts/ (the library
chart, which the repository links there). Publish an archive with helm push <archive> oci://<registry>/<path>.
image: prints, one per line, the operator image each chart runs with its default values ([registry/]repository:
appVersion, or @digest): the reference the release workflow and the local image build tag the image with.

Options:
  --out <dir>     Where the archives go (default: dist/charts)
  --helm <path>   The helm binary (default: $CAPSTAN_HELM, else the pinned build in ~/.cache/capstan, else helm on PATH)
  -h, --help      Show this help
`;

const NEW_USAGE = `Usage: capstan new operator <name> --group <group> --kind <Kind> [--plural <plural>] [--dir <root>]
       capstan new operator <name> --group <group> --kind <Kind> --standalone [--dir <new dir>]
                                   [--capstan-tarballs <dir>]

Makes, at the root of a Capstan repository (default: the current directory):
  operators/<name>/             @capstan/<name>-operator: api/ (the <Kind> schema and types), plan/ (pure, table
                                tested), desired/ (pure builders, golden tested), reconcile/ (the controller,
                                tested against the in-memory API server), main.ts (flags), a sample
  charts/<name>-operator/       its Helm chart on the capstan-operator library chart (RBAC for its kinds, alerts,
                                dashboard; CRD copy and values.schema.json written by capstan crd)
  e2e/images/<name>-operator/   its registry-free image build (or: docker build --build-arg OPERATOR=<name> .)
  e2e/suites/<name>/            an end-to-end suite that installs the chart and sees a <Kind> reconciled
  docs/operators/<name>.md      its page, with the generated reference
The operator keeps a ConfigMap for each <Kind>: replace that with what yours does. Nothing is overwritten.

With --standalone, makes a repository of its own instead (default directory ./<name>-operator, new or empty): the
same files, minus e2e/images, with a root package.json (npm workspaces; @capstan/core, @capstan/cli and
@capstan/testing by version), tsconfig.base.json, biome.json, a Dockerfile, a README, and the capstan-operator
library chart copied into charts/ (no links).

Options:
  --group <group>    API group, e.g. greeter.example.com
  --kind <Kind>      Kind, e.g. Greeter
  --plural <plural>  Resource name (default: the kind in lower case + "s")
  --dir <root>       The repository root (default: the current directory; with --standalone: ./<name>-operator)
  --standalone       Make a standalone repository for the operator
  --capstan-tarballs <dir>
                     With --standalone: install @capstan/core, @capstan/cli and @capstan/testing from their npm
                     pack tarballs in <dir>, copied into vendor/ (until they are published)
  -h, --help         Show this help
`;

/** Runs `capstan <argv>`; resolves to the exit code (0 ok, 1 drift found by --check, 2 usage or input error). */
export async function runCli(argv: string[], io: CliIo): Promise<number> {
  const [command, ...rest] = argv;
  if (command === undefined || command === "help" || command === "--help" || command === "-h") {
    (command === undefined ? io.err : io.out)(USAGE);
    return command === undefined ? 2 : 0;
  }
  try {
    switch (command) {
      case "crd":
        return await crd(rest, io);
      case "new":
        return await newCommand(rest, io);
      case "chart":
        return chartCommand(rest, io);
      case "rbac":
        return await rbacCommand(rest, io);
      default:
        io.err(`capstan: unknown command "${command}"\n\n${USAGE}`);
        return 2;
    }
  } catch (err) {
    io.err(`capstan ${command}: ${err instanceof Error ? err.message : String(err)}\n`);
    return 2;
  }
}

async function crd(args: string[], io: CliIo): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      check: { type: "boolean", default: false },
      dir: { type: "string" },
      help: { type: "boolean", short: "h", default: false },
    },
    strict: true,
    allowPositionals: false,
  });
  if (values.help) {
    io.out(CRD_USAGE);
    return 0;
  }
  const dir = resolve(io.cwd, values.dir ?? ".");
  const plan = await planCrdFiles(dir);
  const kinds = plan.crds.map((c) => c.spec.names.kind).join(", ");
  if (values.check) {
    const drift = planDrift(plan);
    if (drift.length === 0) {
      io.out(`capstan crd: ${plan.files.length} generated files of ${kinds} are current\n`);
      return 0;
    }
    for (const d of drift) io.err(`${formatDrift(d, io.cwd)}\n`);
    io.err(
      `capstan crd --check: ${drift.length} file(s) differ from the schema: run capstan crd in ${dir}\n`,
    );
    return 1;
  }
  const { written, removed } = writePlan(plan);
  for (const path of written) io.out(`wrote ${relative(io.cwd, path)}\n`);
  for (const path of removed) io.out(`removed ${relative(io.cwd, path)}\n`);
  if (written.length + removed.length === 0) {
    io.out(`capstan crd: ${plan.files.length} generated files of ${kinds} are current\n`);
  }
  return 0;
}

function chartCommand(args: string[], io: CliIo): number {
  const { values, positionals } = parseArgs({
    args,
    options: {
      out: { type: "string" },
      helm: { type: "string" },
      help: { type: "boolean", short: "h", default: false },
    },
    strict: true,
    allowPositionals: true,
  });
  if (values.help) {
    io.out(CHART_USAGE);
    return 0;
  }
  const [what, ...dirs] = positionals;
  if (what !== "package" && what !== "image") {
    io.err(CHART_USAGE);
    return 2;
  }
  const charts =
    dirs.length > 0 ? dirs.map((d) => resolve(io.cwd, d)) : operatorChartDirs(resolve(io.cwd, "charts"));
  if (charts.length === 0)
    throw new Error(`no chart built on capstan-operator under ${resolve(io.cwd, "charts")}`);
  if (what === "image") {
    for (const chart of charts) io.out(`${chartImage(chart)}\n`);
    return 0;
  }
  const helm = values.helm ?? requireHelm();
  const out = resolve(io.cwd, values.out ?? "dist/charts");
  for (const chart of charts)
    io.out(`packaged ${relative(io.cwd, packageChart(helm, chart, out).archive)}\n`);
  return 0;
}

async function newCommand(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    options: {
      group: { type: "string" },
      kind: { type: "string" },
      plural: { type: "string" },
      dir: { type: "string" },
      standalone: { type: "boolean", default: false },
      "capstan-tarballs": { type: "string" },
      help: { type: "boolean", short: "h", default: false },
    },
    strict: true,
    allowPositionals: true,
  });
  if (values.help) {
    io.out(NEW_USAGE);
    return 0;
  }
  const [what, name, ...extra] = positionals;
  if (what !== "operator" || name === undefined || extra.length > 0 || !values.group || !values.kind) {
    io.err(NEW_USAGE);
    return 2;
  }
  const options = {
    name,
    group: values.group,
    kind: values.kind,
    ...(values.plural === undefined ? {} : { plural: values.plural }),
  };
  const tarballs = values["capstan-tarballs"];
  if (tarballs !== undefined && !values.standalone) {
    io.err(`capstan new operator: --capstan-tarballs goes with --standalone\n\n${NEW_USAGE}`);
    return 2;
  }
  if (values.standalone) {
    const dir = resolve(io.cwd, values.dir ?? `${name}-operator`);
    const written = await writeStandaloneOperator(
      dir,
      options,
      tarballs === undefined ? {} : { capstanTarballs: resolve(io.cwd, tarballs) },
    );
    for (const path of written) io.out(`wrote ${relative(io.cwd, join(dir, path))}\n`);
    io.out(`
The ${name} operator's repository is in ${relative(io.cwd, dir) || "."}. Next:
  cd ${relative(io.cwd, dir) || "."} && git init
  npm install && npm run format                     the tools, and Biome's formatting of the new files
  npm run typecheck && npm run lint && npm test     as CI would
  npm run build                                     operators/${name}/dist/main.js; docker build . for the image
Until @capstan/core, @capstan/cli and @capstan/testing are on npm, npm install needs their tarballs: see README.md.
`);
    return 0;
  }
  const root = resolve(io.cwd, values.dir ?? ".");
  const written = await writeNewOperator(root, options);
  for (const path of written) io.out(`wrote ${path}\n`);
  io.out(`
The ${name} operator is in operators/${name}. Next:
  npm install                                        link the new workspace
  npx turbo run build test --filter=@capstan/${name}-operator
                                                     its build and tests, after what it needs (@capstan/core,
                                                     @capstan/cli, @capstan/testing) is built
  bash e2e/run.sh suites/${name}/${name}.test.ts     its image built and imported into the local cluster's node, the
                                                     chart installed, the sample ${values.kind} reconciled
Then make it yours: api/ (the schema), plan/, desired/, reconcile/; docs/operators/${name}.md says what it does.
`);
  return 0;
}
