// The unseal keys between PUT /v1/sys/init and their Secret. Vault shows the keys and the root token once, in
// init's answer: until the keys Secret holds them they exist only in this process, so the keeper
//  - writes them through a client of its own, not a reconcile's (core aborts those when the Lease is lost, and
//    losing the Lease is likely while the API server is slow): a second init is impossible anyway (the marker on
//    pod 0's claim), so an unfenced write cannot race another leader's init;
//  - retries until they are written, however long the API server is away, with a capped backoff;
//  - says so meanwhile: readiness fails (check), a Warning Event KeysNotStored, and the controller reports
//    Degraded KeysNotStored; a Normal Event KeysStored once written;
//  - lets the process wait for it (idle) before it exits, with every init in flight (whileInit), answering the
//    kubelet's probes meanwhile (serveProbes: alive, not ready), so a liveness probe never kills the only holder.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import {
  type Client,
  type EventRecorder,
  isAlreadyExists,
  isNotFound,
  type Logger,
  Secret,
  type SecretObject,
  silentLogger,
} from "@capstan/core";
import type { VaultCluster } from "../api/vault-cluster.ts";
import { clusterRef, keysSecretName } from "../desired/names.ts";
import { base64Values, keysSecret } from "../desired/objects.ts";

/** Options of {@link KeysKeeper}. */
export interface KeysKeeperOptions {
  /** A client that no Lease or reconcile aborts (main.ts makes one of its own); only patch and create are used. */
  client: KeysClient;
  recorder?: EventRecorder;
  log?: Logger;
  /** First wait between attempts (default 500 ms); it doubles up to maxDelayMs (default 10 s). */
  minDelayMs?: number;
  maxDelayMs?: number;
  /** How long an init step waits for its keys to be written before it reports KeysNotStored (default 15 s). */
  stepWaitMs?: number;
}

/** What the keeper needs of a client. */
export type KeysClient = Pick<Client, "patch" | "create">;

/** Where an init's keys go: the cluster's keys Secret unless a restore's temporary Vault keeps its own apart. */
export interface KeysTarget {
  /** The Secret's name. */
  name: string;
  /** The Secret made again with the keys, if it is gone. */
  make: (data: Record<string, string>) => SecretObject;
}

/** Keys of one cluster not yet in their Secret. */
export interface PendingKeys {
  /** The Secret they go to. */
  secret: string;
  since: Date;
  attempts: number;
  lastError?: string;
}

interface Entry extends PendingKeys {
  written: Promise<void>;
}

/** Holds init answers until their keys Secret has them; one per operator process. */
export class KeysKeeper {
  readonly #client: KeysClient;
  readonly #recorder: EventRecorder | undefined;
  readonly #log: Logger;
  readonly #minDelayMs: number;
  readonly #maxDelayMs: number;
  /** How long an init step waits for its keys to be written before it reports KeysNotStored. */
  readonly stepWaitMs: number;
  readonly #pending = new Map<string, Entry>();
  readonly #inits = new Set<Promise<unknown>>();
  #idleWaiters: (() => void)[] = [];

  constructor(options: KeysKeeperOptions) {
    this.#client = options.client;
    this.#recorder = options.recorder;
    this.#log = options.log ?? silentLogger;
    this.#minDelayMs = options.minDelayMs ?? 500;
    this.#maxDelayMs = options.maxDelayMs ?? 10_000;
    this.stepWaitMs = options.stepWaitMs ?? 15_000;
  }

  /**
   * Runs `init` (PUT /v1/sys/init) as an init in flight, so {@link idle} waits for it; once it answers, its keys
   * are kept (see {@link keep}) before the init stops counting. Resolves with the write's promise (in an object,
   * so awaiting the call does not wait for the write).
   */
  async whileInit(
    cluster: VaultCluster,
    init: () => Promise<Record<string, string>>,
    target?: KeysTarget,
  ): Promise<{ written: Promise<void> }> {
    const run = init().then((data) => ({ written: this.keep(cluster, data, target) }));
    this.#inits.add(run);
    try {
      return await run;
    } finally {
      this.#inits.delete(run);
      this.#wakeIfIdle();
    }
  }

  /** Merges `data` into the cluster's keys Secret (creating it if it is gone), retrying until it is written. */
  keep(cluster: VaultCluster, data: Record<string, string>, target?: KeysTarget): Promise<void> {
    const key = keyOf(cluster);
    const to: KeysTarget = target ?? {
      name: keysSecretName(cluster),
      make: (d) => keysSecret(cluster, d, {}),
    };
    const entry: Entry = {
      secret: to.name,
      since: new Date(),
      attempts: 0,
      written: Promise.resolve(),
    };
    entry.written = this.#write(cluster, data, entry, to).finally(() => {
      if (this.#pending.get(key) === entry) this.#pending.delete(key);
      this.#wakeIfIdle();
    });
    this.#pending.set(key, entry);
    return entry.written;
  }

  /** The cluster's keys not yet written, if any. */
  pending(namespace: string, name: string): PendingKeys | undefined {
    const e = this.#pending.get(`${namespace}/${name}`);
    if (e === undefined) return undefined;
    return {
      secret: e.secret,
      since: e.since,
      attempts: e.attempts,
      ...(e.lastError === undefined ? {} : { lastError: e.lastError }),
    };
  }

  /** A readiness check: throws while any keys wait for their Secret. */
  check(): true {
    if (this.#pending.size === 0) return true;
    const which = [...this.#pending].map(
      ([key, e]) =>
        `${key}: Secret ${e.secret} not written since ${e.since.toISOString()} (${e.attempts} attempts${e.lastError ? `; last: ${e.lastError}` : ""})`,
    );
    throw new Error(`unseal keys held only in memory: ${which.join("; ")}`);
  }

  /**
   * After the manager stopped (its probe servers closed) while keys are still pending: answers /healthz and
   * /livez with 200 and /readyz with 503 and the pending keys, on the manager's health address, so the kubelet
   * neither restarts nor routes to the process that holds them. Resolves with the port it listens on (port 0
   * picks one) and a function that closes it.
   */
  async serveProbes(port: number, host = "0.0.0.0"): Promise<{ port: number; close: () => Promise<void> }> {
    const server = createServer((req, res) => {
      const path = (req.url ?? "/").split("?")[0];
      if (path === "/healthz" || path === "/livez") {
        res
          .writeHead(200, { "content-type": "text/plain" })
          .end("ok: writing the unseal keys before exiting\n");
      } else if (path === "/readyz") {
        let message = "ok";
        try {
          this.check();
        } catch (err) {
          message = (err as Error).message;
        }
        res.writeHead(this.#isIdle() ? 200 : 503, { "content-type": "text/plain" }).end(`${message}\n`);
      } else {
        res.writeHead(404).end();
      }
    });
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(port, host, () => resolve());
    });
    return {
      port: (server.address() as AddressInfo).port,
      close: () =>
        new Promise<void>((resolve) => {
          server.closeAllConnections();
          server.close(() => resolve());
        }),
    };
  }

  /** True while an init is in flight or keys wait for their Secret. */
  busy(): boolean {
    return !this.#isIdle();
  }

  /** Resolves once no init is in flight and every key is written: the process must not end before. */
  idle(): Promise<void> {
    if (this.#isIdle()) return Promise.resolve();
    return new Promise((resolve) => this.#idleWaiters.push(resolve));
  }

  #isIdle(): boolean {
    return this.#inits.size === 0 && this.#pending.size === 0;
  }

  #wakeIfIdle(): void {
    if (!this.#isIdle()) return;
    const waiters = this.#idleWaiters;
    this.#idleWaiters = [];
    for (const w of waiters) w();
  }

  async #write(
    cluster: VaultCluster,
    data: Record<string, string>,
    entry: Entry,
    to: KeysTarget,
  ): Promise<void> {
    const { namespace, name } = clusterRef(cluster);
    const log = this.#log.child({ namespace, name, secret: entry.secret });
    for (let delay = this.#minDelayMs; ; delay = Math.min(delay * 2, this.#maxDelayMs)) {
      entry.attempts++;
      try {
        await this.#writeOnce(cluster, data, to);
        if (entry.attempts > 1) {
          const message = `the unseal keys reached Secret ${entry.secret} after ${entry.attempts} attempts`;
          log.info(message);
          this.#recorder?.event(cluster, "Normal", "KeysStored", "InitVault", message);
        }
        return;
      } catch (err) {
        entry.lastError = err instanceof Error ? err.message : String(err);
        if (entry.attempts === 1) {
          const message = `Vault is initialized but its unseal keys could not be written to Secret ${entry.secret} (${entry.lastError}): they are held in the operator's memory and written as soon as the API server takes them; do not restart the operator meanwhile`;
          log.error({ err: entry.lastError }, message);
          this.#recorder?.event(cluster, "Warning", "KeysNotStored", "InitVault", message);
        } else {
          log.warn(
            { err: entry.lastError, attempts: entry.attempts },
            "the unseal keys are still not written",
          );
        }
      }
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }

  async #writeOnce(cluster: VaultCluster, data: Record<string, string>, to: KeysTarget): Promise<void> {
    const { namespace } = clusterRef(cluster);
    try {
      await this.#client.patch(Secret, to.name, namespace, { data: base64Values(data) }, "merge");
    } catch (err) {
      if (!isNotFound(err)) throw err;
      // The Secret made before init is gone (deleted by hand): make it again, with the keys.
      await this.#client.create(Secret, to.make(data)).catch((e: unknown) => {
        if (!isAlreadyExists(e)) throw e;
        throw new Error(`Secret ${to.name} appeared while being made again; retrying the merge`);
      });
    }
  }
}

function keyOf(cluster: VaultCluster): string {
  const { namespace, name } = clusterRef(cluster);
  return `${namespace}/${name}`;
}
