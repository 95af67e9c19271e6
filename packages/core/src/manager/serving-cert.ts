// The metrics server's TLS certificate: read from a directory (the tls.crt and tls.key of a mounted
// kubernetes.io/tls Secret, e.g. cert-manager's) and re-read when the files change, as controller-runtime's
// certwatcher does; or, without a directory, a self-signed one made at start (controller-runtime's default).
// The certificate itself is made by the certificates helper (pkijs and WebCrypto).
import { type FSWatcher, readFileSync, watch } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { createSecureContext } from "node:tls";
import { type CertificatePair, selfSignedCertificate as selfSigned } from "../helpers/certificates.ts";
import type { Logger } from "../util/logger.ts";

export type { CertificatePair } from "../helpers/certificates.ts";

export interface SelfSignedOptions {
  /** DNS names and IP addresses the certificate names; default localhost, the hostname, 127.0.0.1, ::1. */
  hosts?: string[];
  /** Default 365 days. */
  validDays?: number;
}

/** A self-signed ECDSA P-256 server certificate for `hosts` (names and IPs), valid from now. */
export function selfSignedCertificate(options: SelfSignedOptions = {}): Promise<CertificatePair> {
  return selfSigned({
    hosts: options.hosts ?? ["localhost", hostname(), "127.0.0.1", "::1"],
    validityMs: (options.validDays ?? 365) * 86_400_000,
  });
}

export interface CertWatcherOptions {
  dir: string;
  /** Default tls.crt. */
  certName?: string;
  /** Default tls.key. */
  keyName?: string;
  /** Called with each new valid pair after a change. */
  onChange: (pair: CertificatePair) => void;
  /** The files are also re-read this often (a watch can miss a Secret volume's symlink swap); default 10 s. */
  pollIntervalMs?: number;
  logger: Logger;
}

/** Reads a certificate and key from a directory, and re-reads them when they change. */
export class CertWatcher {
  private readonly certPath: string;
  private readonly keyPath: string;
  private readonly options: CertWatcherOptions;
  private current: CertificatePair | undefined;
  private watcher: FSWatcher | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(options: CertWatcherOptions) {
    this.options = options;
    this.certPath = join(options.dir, options.certName ?? "tls.crt");
    this.keyPath = join(options.dir, options.keyName ?? "tls.key");
  }

  /** Reads and checks the pair (the key must match the certificate); throws saying which file is wrong. */
  read(): CertificatePair {
    const readPem = (path: string, what: string) => {
      try {
        return readFileSync(path, "utf8");
      } catch (err) {
        throw new Error(
          `metrics server: cannot read the ${what} ${path}: ${(err as Error).message} (mount a kubernetes.io/tls Secret there, or leave certDir unset for a self-signed certificate)`,
        );
      }
    };
    const pair = { cert: readPem(this.certPath, "certificate"), key: readPem(this.keyPath, "private key") };
    try {
      createSecureContext(pair);
    } catch (err) {
      throw new Error(
        `metrics server: ${this.certPath} and ${this.keyPath} are not a valid certificate and matching key: ${(err as Error).message}`,
      );
    }
    return pair;
  }

  /** Reads the pair now (throwing when it is unusable) and watches for changes; returns the pair. */
  start(): CertificatePair {
    this.current = this.read();
    try {
      this.watcher = watch(this.options.dir, { persistent: false }, () => this.reload());
      this.watcher.on("error", () => this.watcher?.close());
    } catch {
      // No fs.watch on this filesystem: polling alone notices the change.
    }
    this.timer = setInterval(() => this.reload(), this.options.pollIntervalMs ?? 10_000);
    this.timer.unref();
    return this.current;
  }

  stop(): void {
    this.watcher?.close();
    clearInterval(this.timer);
  }

  /** Re-reads the files; a changed, valid pair is handed to onChange, an invalid one is logged and skipped. */
  reload(): void {
    let pair: CertificatePair;
    try {
      pair = this.read();
    } catch (err) {
      // Mid-rotation (certificate written, key not yet) or removed: keep serving the last good pair.
      this.options.logger.warn({ err }, "metrics certificate unusable; keeping the previous one");
      return;
    }
    if (pair.cert === this.current?.cert && pair.key === this.current.key) return;
    this.current = pair;
    this.options.logger.info({ cert: this.certPath }, "metrics certificate reloaded");
    this.options.onChange(pair);
  }
}
