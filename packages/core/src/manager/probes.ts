// The manager's HTTP endpoints: /metrics (Prometheus text format), /healthz and /readyz; over HTTPS and
// behind an authorization check when asked (the secure metrics server, metrics-server.ts).
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { createServer as createHttpsServer, type Server as HttpsServer } from "node:https";
import type { AddressInfo } from "node:net";
import type { Registry } from "prom-client";

/** A named check; throw or return false to fail it. */
export type Check = () => boolean | Promise<boolean>;

export interface ProbeServerOptions {
  /** Serves /metrics when set. */
  registry?: Registry;
  healthChecks?: Map<string, Check>;
  readyChecks?: Map<string, Check>;
  /** Serves HTTPS with this certificate (replace it with setCertificate); plain HTTP when unset. */
  tls?: { cert: string; key: string };
  /** Asked before every request; a refusal is answered with its status and message (e.g. 401, 403). */
  authorize?: (req: IncomingMessage) => Promise<{ status: number; message: string } | undefined>;
  /** Called by close() (e.g. to stop a certificate watcher). */
  onClose?: () => void;
}

/** Runs the checks; the body lists each as "[+]name ok" or "[-]name failed: reason" (Kubernetes' format). */
async function runChecks(checks: Map<string, Check>): Promise<{ ok: boolean; body: string }> {
  let ok = true;
  const lines: string[] = [];
  for (const [name, check] of checks) {
    try {
      if (await check()) lines.push(`[+]${name} ok`);
      else {
        ok = false;
        lines.push(`[-]${name} failed`);
      }
    } catch (err) {
      ok = false;
      lines.push(`[-]${name} failed: ${(err as Error).message}`);
    }
  }
  lines.push(ok ? "healthz check passed" : "healthz check failed");
  return { ok, body: `${lines.join("\n")}\n` };
}

/** An HTTP(S) server for some of /metrics, /healthz, /readyz. */
export class ProbeServer {
  private readonly server: Server | HttpsServer;
  private readonly options: ProbeServerOptions;

  constructor(options: ProbeServerOptions) {
    this.options = options;
    const listener = (req: IncomingMessage, res: ServerResponse) => {
      this.handle(req, res).catch((err: Error) => {
        if (!res.headersSent) res.writeHead(500, { "content-type": "text/plain" });
        res.end(`internal error: ${err.message}\n`);
      });
    };
    this.server = options.tls ? createHttpsServer({ ...options.tls }, listener) : createServer(listener);
    this.server.keepAliveTimeout = 5_000;
  }

  /** Serves a new certificate to new connections (HTTPS only). */
  setCertificate(pair: { cert: string; key: string }): void {
    if (!("setSecureContext" in this.server))
      throw new Error("ProbeServer.setCertificate: not serving HTTPS");
    this.server.setSecureContext(pair);
  }

  /** Listens on host:port (port 0 picks a free one); resolves with the bound port. */
  listen(port: number, host = "0.0.0.0"): Promise<number> {
    return new Promise((resolve, reject) => {
      this.server.once("error", reject);
      this.server.listen(port, host, () => {
        this.server.off("error", reject);
        resolve((this.server.address() as AddressInfo).port);
      });
    });
  }

  close(): Promise<void> {
    this.options.onClose?.();
    return new Promise((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? "/").split("?")[0] ?? "/";
    const { registry, healthChecks, readyChecks, authorize } = this.options;
    const refused = authorize ? await authorize(req) : undefined;
    if (refused) {
      res.writeHead(refused.status, { "content-type": "text/plain; charset=utf-8" });
      res.end(`${refused.message}\n`);
      return;
    }
    if (path === "/metrics" && registry) {
      const body = await registry.metrics();
      res.writeHead(200, { "content-type": registry.contentType });
      res.end(body);
      return;
    }
    const checks =
      path === "/healthz" || path === "/livez" ? healthChecks : path === "/readyz" ? readyChecks : undefined;
    if (!checks) {
      res.writeHead(404, { "content-type": "text/plain" });
      res.end("not found\n");
      return;
    }
    const { ok, body } = await runChecks(checks);
    res.writeHead(ok ? 200 : 500, { "content-type": "text/plain; charset=utf-8" });
    res.end(body);
  }
}
