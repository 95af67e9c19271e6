// For the CLI's own tests: `capstan <args>` run in-process in `cwd`, with what it printed to stdout and stderr.
import { runCli } from "./cli.ts";

/** The exit code and the text `capstan <args>` wrote to stdout (`out`) and stderr (`err`). */
export interface CliResult {
  code: number;
  out: string;
  err: string;
}

export async function runCliCaptured(args: readonly string[], cwd: string): Promise<CliResult> {
  let out = "";
  let err = "";
  const code = await runCli([...args], {
    cwd,
    out: (t) => {
      out += t;
    },
    err: (t) => {
      err += t;
    },
  });
  return { code, out, err };
}
