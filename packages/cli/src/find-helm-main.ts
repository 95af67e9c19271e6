// Prints the helm binary that findHelm (find-helm.ts) chooses, for the shell scripts, so they follow the same rule as
// the CLI and the suites without a build (Node runs this TypeScript as it is):
//   node packages/cli/src/find-helm-main.ts     the path on stdout; exit 1, saying why on stderr, when there is none
import { requireHelm } from "./find-helm.ts";

try {
  process.stdout.write(`${requireHelm()}\n`);
} catch (err) {
  process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = 1;
}
