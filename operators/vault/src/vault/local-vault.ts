// Test support: runs real Vault servers on 127.0.0.1 (raft storage in a temp dir, TLS from the operator's own
// certificate builder) from the binary e2e/images/vault/build.sh caches.
import { existsSync, readFileSync } from "node:fs";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  capstanCacheDir,
  freePort,
  isRunning,
  killAll,
  type LoggedProcess,
  spawnLogged,
} from "@capstan/testing";
import { type CertificatePair, createCA, issueServerCertificate } from "../desired/tls.ts";
import { VaultClient } from "./vault-client.ts";

/** The Vault binary e2e/images/vault/build.sh builds: $CAPSTAN_CACHE/vault-v<version>/bin/vault. */
export function localVaultBinary(version = process.env.CAPSTAN_VAULT_VERSION ?? "1.14.8"): string {
  return join(capstanCacheDir(), `vault-v${version}`, "bin", "vault");
}

/** True when {@link localVaultBinary} exists. */
export function haveLocalVault(): boolean {
  return existsSync(localVaultBinary());
}

/** One Vault server process. */
export interface LocalVaultNode extends LoggedProcess {
  /** Raft node ID; also the DNS name its certificate carries as `<name>.vault.test`. */
  name: string;
  apiAddr: string;
  clusterAddr: string;
  /** The TLS servername the certificate carries besides localhost and 127.0.0.1. */
  servername: string;
}

/** Vault servers sharing one temp dir and one CA; {@link LocalVault.stop} kills them and removes the dir. */
export class LocalVault {
  readonly dir: string;
  readonly ca: CertificatePair;
  readonly nodes: LocalVaultNode[] = [];
  readonly #binary: string;
  readonly #pickPort: () => Promise<number>;

  private constructor(dir: string, ca: CertificatePair, binary: string, pickPort: () => Promise<number>) {
    this.dir = dir;
    this.ca = ca;
    this.#binary = binary;
    this.#pickPort = pickPort;
  }

  /** `pickPort` chooses a port for a server started without given ports (tests replace it). */
  static async create(
    binary = localVaultBinary(),
    options: { pickPort?: () => Promise<number> } = {},
  ): Promise<LocalVault> {
    const dir = await mkdtemp(join(tmpdir(), "capstan-vault-"));
    const ca = await createCA("capstan test CA", new Date());
    return new LocalVault(dir, ca, binary, options.pickPort ?? freePort);
  }

  /** The raft data directory of node `name`. */
  dataDir(name: string): string {
    return join(this.dir, name, "data");
  }

  /** The log of node `name` so far. */
  log(name: string): string {
    return readFileSync(join(this.dir, `${name}.log`), "utf8");
  }

  /** A client for node `name` (dialled at 127.0.0.1, verified as its servername). */
  client(node: LocalVaultNode, token?: string): VaultClient {
    return new VaultClient({
      address: node.apiAddr,
      ca: this.ca.cert,
      servername: node.servername,
      timeoutMs: 15_000,
      ...(token === undefined ? {} : { token }),
    });
  }

  /**
   * Starts (or restarts on its data) a Vault server named `name`; ports are reused on a restart. Returns once
   * the server has bound its ports. A server that exits first is an error carrying the end of its log; one
   * that lost its port to another process ("address already in use") is started again: on new ports when
   * none were given, on the same ones (after a pause) when they were.
   */
  async start(name: string, ports?: { api: number; cluster: number }): Promise<LocalVaultNode> {
    for (let attempt = 1; ; attempt++) {
      const chosen = ports ?? { api: await this.#pickPort(), cluster: await this.#pickPort() };
      const before = existsSync(join(this.dir, `${name}.log`)) ? this.log(name).length : 0;
      const node = await this.#spawn(name, chosen);
      const sinceStart = () => this.log(name).slice(before);
      const ended = await started(node, sinceStart, 60_000);
      if (ended === undefined) {
        this.nodes.push(node);
        return node;
      }
      const tail = sinceStart().split("\n").slice(-15).join("\n");
      if (attempt < 5 && /address already in use/i.test(tail)) {
        if (ports !== undefined) await new Promise((r) => setTimeout(r, 1_000));
        continue;
      }
      throw new Error(
        `Vault ${name} ${ended} before it started (ports ${chosen.api}, ${chosen.cluster}); its log ends:\n${tail}`,
      );
    }
  }

  async #spawn(name: string, ports: { api: number; cluster: number }): Promise<LocalVaultNode> {
    const { api, cluster } = ports;
    const home = join(this.dir, name);
    await mkdir(this.dataDir(name), { recursive: true });
    const servername = `${name}.vault.test`;
    const pair = await issueServerCertificate(
      this.ca,
      [servername, "localhost", "127.0.0.1"],
      new Date(),
      3_600_000,
    );
    await writeFile(join(home, "tls.crt"), pair.cert);
    await writeFile(join(home, "tls.key"), pair.key);
    const apiAddr = `https://127.0.0.1:${api}`;
    const clusterAddr = `https://127.0.0.1:${cluster}`;
    const config = {
      disable_mlock: true,
      ui: false,
      listener: [
        {
          tcp: {
            address: `127.0.0.1:${api}`,
            cluster_address: `127.0.0.1:${cluster}`,
            tls_cert_file: join(home, "tls.crt"),
            tls_key_file: join(home, "tls.key"),
          },
        },
      ],
      storage: { raft: { path: this.dataDir(name), node_id: name } },
      api_addr: apiAddr,
      cluster_addr: clusterAddr,
      log_level: "info",
    };
    await writeFile(join(home, "config.json"), JSON.stringify(config, null, 2));
    const child = spawnLogged(
      this.#binary,
      ["server", `-config=${join(home, "config.json")}`],
      join(this.dir, `${name}.log`),
      {
        PATH: process.env.PATH ?? "/usr/bin:/bin",
        HOME: home,
      },
    );
    return { name, apiAddr, clusterAddr, servername, ...child };
  }

  /** Stops node `name` (SIGTERM, then waits). */
  async kill(node: LocalVaultNode, signal: NodeJS.Signals = "SIGTERM"): Promise<void> {
    if (isRunning(node)) node.process.kill(signal);
    await node.exited;
  }

  /** Kills every process still running, waits for them, and removes the temp dir. */
  async stop(): Promise<void> {
    await killAll(this.nodes);
    await rm(this.dir, { recursive: true, force: true });
  }
}

/**
 * Waits until `node` has bound its listeners (Vault prints "Vault server started!" after that); undefined then,
 * or how it ended ("exited with 1") if it ended first or `timeoutMs` passed ("did not start within ...").
 * A connection test would not do: another process holding the port accepts too.
 */
async function started(
  node: LocalVaultNode,
  log: () => string,
  timeoutMs: number,
): Promise<string | undefined> {
  const deadline = Date.now() + timeoutMs;
  let code: number | string | undefined;
  void node.exited.then((c) => {
    code = c;
  });
  while (Date.now() < deadline) {
    if (code !== undefined) return `exited with ${code}`;
    if (log().includes("Vault server started!")) return undefined;
    await new Promise((r) => setTimeout(r, 100));
  }
  await killAll([node]);
  return `did not start within ${timeoutMs} ms`;
}

/** The ports a node listens on (to restart it on the same ones). */
export function portsOf(node: LocalVaultNode): { api: number; cluster: number } {
  return { api: Number(new URL(node.apiAddr).port), cluster: Number(new URL(node.clusterAddr).port) };
}
