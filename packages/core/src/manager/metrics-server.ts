// The manager's /metrics server. Secure by default, as kubebuilder's scaffold with controller-runtime's
// metrics filter: HTTPS, and every request authenticated (TokenReview) and authorized (SubjectAccessReview,
// non-resource URL /metrics, verb get) by the API server. Plain HTTP only when `secure: false` is asked.
// A scraper (e.g. Prometheus' ServiceAccount) needs a ClusterRole with nonResourceURLs ["/metrics"] verbs
// ["get"]; the operator needs create on tokenreviews and subjectaccessreviews.
import type { Registry } from "prom-client";
import type { Client } from "../client/client.ts";
import type { Logger } from "../util/logger.ts";
import { ApiServerAuth, type ApiServerAuthOptions } from "./metrics-auth.ts";
import { type Check, ProbeServer } from "./probes.ts";
import { type CertificatePair, CertWatcher, selfSignedCertificate } from "./serving-cert.ts";

/** How the manager serves /metrics (ManagerOptions.metricsServer). */
export interface MetricsServerOptions {
  /**
   * Default true: HTTPS, and only callers whose bearer token the API server accepts (TokenReview) and whose
   * RBAC allows `get` on the non-resource URL /metrics (SubjectAccessReview) are served. False: plain
   * HTTP, open to anyone who reaches the port.
   */
  secure?: boolean;
  /**
   * A directory holding the serving certificate and key, as a mounted kubernetes.io/tls Secret (e.g. from
   * cert-manager) lays them out; re-read when they change. Unset: a self-signed certificate made at start.
   */
  certDir?: string;
  /** The certificate's file name in certDir; default tls.crt. */
  certName?: string;
  /** The key's file name in certDir; default tls.key. */
  keyName?: string;
}

/** What the manager hands to the metrics server besides the user's options. */
export interface MetricsServerDeps {
  registry: Registry;
  /** Creates the TokenReviews and SubjectAccessReviews in secure mode. */
  client: Client;
  logger: Logger;
  /** Serve /healthz and /readyz too (metricsPort equal to healthPort): plain mode only. */
  healthChecks?: Map<string, Check>;
  readyChecks?: Map<string, Check>;
  /** The port, for error messages. */
  port?: number;
  /** Tests: cache lifetimes and clock of the delegated authorization. */
  auth?: Omit<ApiServerAuthOptions, "client">;
  /** Tests: how often certDir is re-read (default 10 s). */
  certPollIntervalMs?: number;
}

/**
 * Creates the /metrics server (call listen() on it): HTTPS behind API-server authentication and authorization
 * unless `options.secure` is false. Throws, saying what to change, when a certificate directory is unusable
 * or when probes would share the secure port.
 */
export async function createMetricsServer(
  options: MetricsServerOptions | undefined,
  deps: MetricsServerDeps,
): Promise<ProbeServer> {
  const { registry, logger } = deps;
  const probes = {
    ...(deps.healthChecks === undefined ? {} : { healthChecks: deps.healthChecks }),
    ...(deps.readyChecks === undefined ? {} : { readyChecks: deps.readyChecks }),
  };
  if (options?.secure === false) return new ProbeServer({ registry, ...probes });

  if (deps.healthChecks !== undefined || deps.readyChecks !== undefined) {
    throw new Error(
      `metricsPort and healthPort are both ${deps.port ?? "the same port"}: secure metrics (HTTPS with authentication) need a port of their own, as the kubelet's probes are plain HTTP; give them two ports, or set metricsServer.secure to false`,
    );
  }

  let tls: CertificatePair;
  let watcher: CertWatcher | undefined;
  let server: ProbeServer | undefined;
  if (options?.certDir) {
    watcher = new CertWatcher({
      dir: options.certDir,
      ...(options.certName === undefined ? {} : { certName: options.certName }),
      ...(options.keyName === undefined ? {} : { keyName: options.keyName }),
      ...(deps.certPollIntervalMs === undefined ? {} : { pollIntervalMs: deps.certPollIntervalMs }),
      onChange: (pair) => server?.setCertificate(pair),
      logger,
    });
    tls = watcher.start();
  } else {
    tls = await selfSignedCertificate();
  }

  const auth = new ApiServerAuth({ client: deps.client, ...deps.auth });
  server = new ProbeServer({
    registry,
    tls,
    authorize: async (req) => {
      const path = (req.url ?? "/").split("?")[0] ?? "/";
      const decision = await auth.decide(req.headers.authorization, req.method ?? "GET", path);
      if (decision.allowed) return undefined;
      const log = { status: decision.status, user: decision.user?.username, path, detail: decision.detail };
      if (decision.status === 500) logger.error(log, "metrics request: review failed");
      else logger.debug(log, "metrics request refused");
      return { status: decision.status, message: decision.message };
    },
    onClose: () => watcher?.stop(),
  });
  logger.info(
    { certDir: options?.certDir ?? "(self-signed)" },
    "metrics served over HTTPS to callers the API server authenticates and authorizes",
  );
  return server;
}
