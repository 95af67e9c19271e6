// Test support: runs real etcd processes on 127.0.0.1 (free ports, data in a temp dir) from the local cluster's cache.
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, openSync, readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";

/** The etcd binary e2e/cluster/local/build.sh builds: $CAPSTAN_CACHE/etcd-$ETCD_VERSION/bin/etcd. */
export function localEtcdBinary(): string {
  const versions = readFileSync(
    new URL("../../../../e2e/cluster/local/versions.env", import.meta.url),
    "utf8",
  );
  const version = /^ETCD_VERSION=(\S+)/m.exec(versions)?.[1];
  if (version === undefined) throw new Error("ETCD_VERSION is missing from e2e/cluster/local/versions.env");
  const cache = process.env.CAPSTAN_CACHE ?? join(homedir(), ".cache", "capstan");
  return join(cache, `etcd-${version}`, "bin", "etcd");
}

/** True when {@link localEtcdBinary} exists. */
export function haveLocalEtcd(): boolean {
  return existsSync(localEtcdBinary());
}

/** Polls `check` until it returns a value other than undefined (or stops throwing); gives up after `ms`. */
export async function eventually<T>(
  what: string,
  check: () => Promise<T | undefined>,
  ms = 30_000,
  intervalMs = 200,
): Promise<T> {
  const deadline = Date.now() + ms;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${what}: ${String(last ?? "not yet")}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

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

/** One etcd process's identity. */
export interface LocalMemberSpec {
  name: string;
  clientURL: string;
  peerURL: string;
}

/** A running (or exited) etcd process. */
export interface LocalMember extends LocalMemberSpec {
  process: ChildProcess;
  /** Resolves with the exit code (or signal) when the process exits. */
  exited: Promise<number | string>;
}

/** A set of etcd processes sharing one temp dir; {@link LocalEtcd.stop} kills them all and removes the dir. */
export class LocalEtcd {
  readonly dir: string;
  readonly members: LocalMember[] = [];
  readonly #binary: string;

  private constructor(dir: string, binary: string) {
    this.dir = dir;
    this.#binary = binary;
  }

  /** Creates the temp dir; start members with {@link LocalEtcd.start}. */
  static async create(binary = localEtcdBinary()): Promise<LocalEtcd> {
    return new LocalEtcd(await mkdtemp(join(tmpdir(), "capstan-etcd-")), binary);
  }

  /** Picks free ports for a new member named `name`. */
  async allocate(name: string): Promise<LocalMemberSpec> {
    return {
      name,
      clientURL: `http://127.0.0.1:${await freePort()}`,
      peerURL: `http://127.0.0.1:${await freePort()}`,
    };
  }

  /** The data directory of member `name`. */
  dataDir(name: string): string {
    return join(this.dir, name);
  }

  /** The log of member `name` so far. */
  log(name: string): string {
    return readFileSync(join(this.dir, `${name}.log`), "utf8");
  }

  /**
   * Starts an etcd process; `cluster` is every member of --initial-cluster (including this one); `extraArgs` are
   * added to the flags (e.g. "--quota-backend-bytes=...").
   */
  start(
    spec: LocalMemberSpec,
    cluster: LocalMemberSpec[],
    state: "new" | "existing",
    extraArgs: string[] = [],
  ): LocalMember {
    const log = openSync(join(this.dir, `${spec.name}.log`), "a");
    const child = spawn(
      this.#binary,
      [
        `--name=${spec.name}`,
        `--data-dir=${join(this.dir, spec.name)}`,
        `--listen-client-urls=${spec.clientURL}`,
        `--advertise-client-urls=${spec.clientURL}`,
        `--listen-peer-urls=${spec.peerURL}`,
        `--initial-advertise-peer-urls=${spec.peerURL}`,
        `--initial-cluster=${cluster.map((m) => `${m.name}=${m.peerURL}`).join(",")}`,
        `--initial-cluster-state=${state}`,
        "--initial-cluster-token=capstan-test",
        // Tests share two cores with other suites: slower heartbeats keep a starved member from calling
        // spurious elections that would move the leader under a test's feet.
        "--heartbeat-interval=250",
        "--election-timeout=2500",
        ...extraArgs,
      ],
      { stdio: ["ignore", log, log] },
    );
    const exited = new Promise<number | string>((resolve) => {
      child.once("exit", (code, signal) => resolve(code ?? signal ?? "unknown"));
      child.once("error", (err) => resolve(err.message));
    });
    const member = { ...spec, process: child, exited };
    this.members.push(member);
    return member;
  }

  /** Kills every process still running, waits for them, and removes the temp dir. */
  async stop(): Promise<void> {
    for (const m of this.members) {
      if (m.process.exitCode === null && m.process.signalCode === null) m.process.kill("SIGKILL");
    }
    await Promise.all(this.members.map((m) => m.exited));
    await rm(this.dir, { recursive: true, force: true });
  }
}
