// Running real operand binaries (etcd, Vault...) on 127.0.0.1 for an operator's tests: free ports, the local
// build cache the e2e scripts fill, and child processes logging to a file that are killed and awaited at the end.
import { type ChildProcess, spawn } from "node:child_process";
import { openSync } from "node:fs";
import { createServer } from "node:net";
import { homedir } from "node:os";
import { join } from "node:path";

/** A TCP port free on 127.0.0.1 right now. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", resolve);
  });
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === "string") throw new Error("no port assigned");
  return address.port;
}

/** Where e2e/cluster/local/build.sh and e2e/images/ keep built binaries: $CAPSTAN_CACHE or ~/.cache/capstan. */
export function capstanCacheDir(): string {
  return process.env.CAPSTAN_CACHE ?? join(homedir(), ".cache", "capstan");
}

/** A child process and a promise of how it ended. */
export interface LoggedProcess {
  process: ChildProcess;
  /** Resolves with the exit code, the signal, or the spawn error's message when the process ends. */
  exited: Promise<number | string>;
}

/**
 * Starts `binary` with `args`, stdout and stderr appended to `logFile`, stdin closed; `env` replaces the
 * environment when given.
 */
export function spawnLogged(
  binary: string,
  args: readonly string[],
  logFile: string,
  env?: NodeJS.ProcessEnv,
): LoggedProcess {
  const log = openSync(logFile, "a");
  const child = spawn(binary, args, { stdio: ["ignore", log, log], ...(env === undefined ? {} : { env }) });
  const exited = new Promise<number | string>((resolve) => {
    child.once("exit", (code, signal) => resolve(code ?? signal ?? "unknown"));
    child.once("error", (err) => resolve(err.message));
  });
  return { process: child, exited };
}

/** True while the process has neither exited nor been killed by a signal. */
export function isRunning(p: LoggedProcess): boolean {
  return p.process.exitCode === null && p.process.signalCode === null;
}

/** Sends `signal` to every process still running and waits until all of them have ended. */
export async function killAll(
  processes: readonly LoggedProcess[],
  signal: NodeJS.Signals = "SIGKILL",
): Promise<void> {
  for (const p of processes) if (isRunning(p)) p.process.kill(signal);
  await Promise.all(processes.map((p) => p.exited));
}
