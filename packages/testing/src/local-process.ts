// Running real operand binaries (etcd, Vault...) on 127.0.0.1 for an operator's tests: free ports, the local
// build cache the e2e scripts fill, and child processes logging to a file that are killed and awaited at the end.
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { openSync, readFileSync } from "node:fs";
import { createServer } from "node:net";
import { homedir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";

/**
 * The kernel's ephemeral port range (where outbound connections take their local port), read from
 * /proc/sys/net/ipv4/ip_local_port_range; Linux's default when that cannot be read.
 */
export function ephemeralPortRange(): { low: number; high: number } {
  try {
    const [low, high] = readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8")
      .trim()
      .split(/\s+/)
      .map(Number);
    if (
      low !== undefined &&
      high !== undefined &&
      Number.isInteger(low) &&
      Number.isInteger(high) &&
      low > 1024
    ) {
      return { low, high };
    }
  } catch {
    // not Linux: use the default below
  }
  return { low: 32768, high: 60999 };
}

async function canListen(port: number): Promise<boolean> {
  const server = createServer();
  const bound = await new Promise<boolean>((resolve) => {
    server.once("error", () => resolve(false));
    server.listen(port, "127.0.0.1", () => resolve(true));
  });
  if (bound) await new Promise<void>((resolve) => server.close(() => resolve()));
  return bound;
}

/**
 * A TCP port free on 127.0.0.1 right now, chosen below the ephemeral range: a server started on it a moment later
 * does not find it taken by one of the many outbound connections a test makes (a port from `listen(0)` is an
 * ephemeral one, and a Vault or etcd that lost that race exited with "address already in use").
 */
export async function freePort(): Promise<number> {
  const high = Math.min(ephemeralPortRange().low, 65536) - 1;
  const low = Math.min(20_000, high - 1000);
  for (let attempt = 0; attempt < 100; attempt++) {
    const port = low + Math.floor(Math.random() * (high - low + 1));
    if (await canListen(port)) return port;
  }
  throw new Error(`no free port on 127.0.0.1 in ${low}-${high} after 100 tries`);
}

/** Where e2e/cluster/local/build.sh and e2e/images/ keep built binaries: $CAPSTAN_CACHE or ~/.cache/capstan. */
export function capstanCacheDir(): string {
  return process.env.CAPSTAN_CACHE ?? join(homedir(), ".cache", "capstan");
}

/**
 * Runs `command` in `cwd` to its end (colour off, `timeoutMs` at most); resolves to its standard output, or throws
 * with the command, its exit and its output.
 */
export async function runCommand(
  cwd: string,
  command: string,
  args: string[],
  timeoutMs = 300_000,
): Promise<string> {
  try {
    const { stdout } = await promisify(execFile)(command, args, {
      cwd,
      timeout: timeoutMs,
      maxBuffer: 64 << 20,
      env: { ...process.env, NO_COLOR: "1", FORCE_COLOR: "0" },
    });
    return stdout;
  } catch (err) {
    const e = err as Error & { stdout?: string; stderr?: string };
    throw new Error(
      `${command} ${args.join(" ")} (in ${cwd}) failed: ${e.message}\n${e.stdout ?? ""}${e.stderr ?? ""}`,
    );
  }
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
