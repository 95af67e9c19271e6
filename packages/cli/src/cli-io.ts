// Where a command of the CLI writes and where it runs: a leaf module, so commands never import cli.ts for it.

/** Where a command writes and where it runs. */
export interface CliIo {
  cwd: string;
  out: (text: string) => void;
  err: (text: string) => void;
}
