// Entry of the `capstan` binary (bin/capstan.js imports the build of this file).
import { runCli } from "./cli.ts";

process.exitCode = await runCli(process.argv.slice(2), {
  cwd: process.cwd(),
  out: (text) => process.stdout.write(text),
  err: (text) => process.stderr.write(text),
});
