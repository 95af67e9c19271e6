// Test support: runs real etcd processes on 127.0.0.1 (free ports, data in a temp dir) from the local cluster's cache.
import { existsSync, readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { capstanCacheDir, freePort, killAll, type LoggedProcess, spawnLogged } from "@capstan/testing";

/** The etcd binary e2e/cluster/local/build.sh builds: $CAPSTAN_CACHE/etcd-$ETCD_VERSION/bin/etcd. */
export function localEtcdBinary(): string {
  const versions = readFileSync(
    new URL("../../../../e2e/cluster/local/versions.env", import.meta.url),
    "utf8",
  );
  const version = /^ETCD_VERSION=(\S+)/m.exec(versions)?.[1];
  if (version === undefined) throw new Error("ETCD_VERSION is missing from e2e/cluster/local/versions.env");
  return join(capstanCacheDir(), `etcd-${version}`, "bin", "etcd");
}

/** True when {@link localEtcdBinary} exists. */
export function haveLocalEtcd(): boolean {
  return existsSync(localEtcdBinary());
}

/** One etcd process's identity. */
export interface LocalMemberSpec {
  name: string;
  clientURL: string;
  peerURL: string;
}

/** A running (or exited) etcd process. */
export interface LocalMember extends LocalMemberSpec, LoggedProcess {}

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
    const child = spawnLogged(
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
      join(this.dir, `${spec.name}.log`),
    );
    const member = { ...spec, ...child };
    this.members.push(member);
    return member;
  }

  /** Kills every process still running, waits for them, and removes the temp dir. */
  async stop(): Promise<void> {
    await killAll(this.members);
    await rm(this.dir, { recursive: true, force: true });
  }
}
