// A scripted API server that answers only TokenReviews and SubjectAccessReviews, for the unit tests of the
// secure metrics server: tokens map to users, and a set of users may get /metrics.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { KubeConfig } from "@kubernetes/client-node";
import { Registry } from "prom-client";
import { Client } from "../client/client.ts";
import { CoreMetrics } from "../metrics/metrics.ts";
import type { UserInfo } from "./metrics-auth.ts";

export class FakeReviewServer {
  /** token -> the user the TokenReview names. */
  readonly tokens = new Map<string, UserInfo>();
  /** "username verb path" triples a SubjectAccessReview allows. */
  readonly allowed = new Set<string>();
  /** Every review received: its kind and spec. */
  readonly reviews: { kind: string; spec: Record<string, unknown> }[] = [];
  /** When set, every review is answered with this HTTP status (a Status body). */
  failWith: number | undefined;
  private server: Server | undefined;
  port = 0;

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      let body = "";
      req.on("data", (c) => {
        body += c;
      });
      req.on("end", () => {
        const send = (code: number, obj: unknown) => {
          res.writeHead(code, { "content-type": "application/json" });
          res.end(JSON.stringify(obj));
        };
        const review = JSON.parse(body || "{}") as { kind?: string; spec?: Record<string, unknown> };
        const kind = review.kind ?? "";
        const spec = review.spec ?? {};
        this.reviews.push({ kind, spec });
        if (this.failWith !== undefined) {
          return send(this.failWith, { kind: "Status", code: this.failWith, message: "scripted failure" });
        }
        if (req.method === "POST" && req.url === "/apis/authentication.k8s.io/v1/tokenreviews") {
          const user = this.tokens.get(String(spec.token));
          return send(201, {
            ...review,
            status: user ? { authenticated: true, user } : { authenticated: false },
          });
        }
        if (req.method === "POST" && req.url === "/apis/authorization.k8s.io/v1/subjectaccessreviews") {
          const attrs = spec.nonResourceAttributes as { path: string; verb: string };
          const allowed = this.allowed.has(`${String(spec.user)} ${attrs.verb} ${attrs.path}`);
          return send(201, {
            ...review,
            status: { allowed, ...(allowed ? {} : { reason: "no RBAC rule" }) },
          });
        }
        send(404, { kind: "Status", code: 404, reason: "NotFound", message: `${req.method} ${req.url}` });
      });
    });
    await new Promise<void>((r) => this.server?.listen(0, "127.0.0.1", r));
    this.port = (this.server.address() as AddressInfo).port;
  }

  async stop(): Promise<void> {
    await new Promise<void>((r) => {
      this.server?.close(() => r());
      this.server?.closeAllConnections();
    });
  }

  /** A client of this server, retrying nothing (so a scripted failure is seen at once). */
  client(): Client {
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: "fake", server: `http://127.0.0.1:${this.port}`, skipTLSVerify: true }],
      users: [{ name: "fake", token: "operator-token" }],
      contexts: [{ name: "fake", cluster: "fake", user: "fake" }],
      currentContext: "fake",
    });
    return new Client({ kubeConfig: kc, maxAttempts: 1, metrics: new CoreMetrics(new Registry()) });
  }

  count(kind: "TokenReview" | "SubjectAccessReview"): number {
    return this.reviews.filter((r) => r.kind === kind).length;
  }
}
