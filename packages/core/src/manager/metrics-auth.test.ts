// The delegated authentication and authorization of metrics scrapes, against a scripted review server.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Client } from "../client/client.ts";
import { FakeReviewServer } from "./fake-review-server.test-util.ts";
import { ApiServerAuth, bearerToken } from "./metrics-auth.ts";

let api: FakeReviewServer;
let client: Client;
let clock = 1_000_000;
const now = () => clock;

const prometheus = {
  username: "system:serviceaccount:monitoring:prometheus",
  uid: "uid-1",
  groups: ["system:serviceaccounts", "system:serviceaccounts:monitoring", "system:authenticated"],
  extra: { "authentication.kubernetes.io/pod-name": ["prometheus-0"] },
};
const stranger = { username: "system:serviceaccount:apps:web", groups: ["system:authenticated"] };

beforeEach(async () => {
  api = new FakeReviewServer();
  await api.start();
  api.tokens.set("prom-token", prometheus);
  api.tokens.set("web-token", stranger);
  api.allowed.add(`${prometheus.username} get /metrics`);
  client = api.client();
});

afterEach(async () => {
  await client.close();
  await api.stop();
});

function newAuth() {
  return new ApiServerAuth({ client, now });
}

describe("bearerToken", () => {
  it("reads 'Bearer <token>' (any case), and nothing else", () => {
    expect(bearerToken("Bearer abc")).toBe("abc");
    expect(bearerToken("  bearer abc ")).toBe("abc");
    expect(bearerToken(undefined)).toBeUndefined();
    expect(bearerToken("Basic dXNlcjpwYXNz")).toBeUndefined();
    expect(bearerToken("Bearer")).toBeUndefined();
    expect(bearerToken("Bearer  abc")).toBeUndefined();
  });
});

describe("ApiServerAuth", () => {
  it("refuses a request without a token with 401, asking the API server nothing", async () => {
    const d = await newAuth().decide(undefined, "GET", "/metrics");
    expect(d).toMatchObject({ allowed: false, status: 401 });
    expect(api.reviews).toEqual([]);
  });

  it("refuses a token the API server does not authenticate with 401", async () => {
    const d = await newAuth().decide("Bearer forged", "GET", "/metrics");
    expect(d).toMatchObject({ allowed: false, status: 401 });
    expect(api.reviews).toEqual([{ kind: "TokenReview", spec: { token: "forged" } }]);
  });

  it("refuses an authenticated user without RBAC for /metrics with 403", async () => {
    const d = await newAuth().decide("Bearer web-token", "GET", "/metrics");
    expect(d).toMatchObject({ allowed: false, status: 403, user: { username: stranger.username } });
    expect(d.allowed || d.message).toMatch(/nonResourceURLs: \["\/metrics"\], verbs: \["get"\]/);
  });

  it("serves an authorized user, asking a SubjectAccessReview with the user's whole identity", async () => {
    const d = await newAuth().decide("Bearer prom-token", "GET", "/metrics");
    expect(d).toEqual({ allowed: true, user: prometheus });
    expect(api.reviews).toEqual([
      { kind: "TokenReview", spec: { token: "prom-token" } },
      {
        kind: "SubjectAccessReview",
        spec: {
          user: prometheus.username,
          uid: prometheus.uid,
          groups: prometheus.groups,
          extra: prometheus.extra,
          nonResourceAttributes: { path: "/metrics", verb: "get" },
        },
      },
    ]);
  });

  it("authorizes the verb and path of the request", async () => {
    const auth = newAuth();
    expect(await auth.decide("Bearer prom-token", "POST", "/metrics")).toMatchObject({ status: 403 });
    expect(await auth.decide("Bearer prom-token", "GET", "/debug")).toMatchObject({ status: 403 });
  });

  it("reuses decisions within their lifetimes: scrapes cost no review until a TTL passes", async () => {
    const auth = newAuth();
    for (let i = 0; i < 5; i++) {
      expect((await auth.decide("Bearer prom-token", "GET", "/metrics")).allowed).toBe(true);
      clock += 15_000; // a scrape every 15 s
    }
    // 75 s: the token review (1 min) was made again once, the allowed decision (5 min) never.
    expect(api.count("TokenReview")).toBe(2);
    expect(api.count("SubjectAccessReview")).toBe(1);
    clock += 300_000;
    await auth.decide("Bearer prom-token", "GET", "/metrics");
    expect(api.count("SubjectAccessReview")).toBe(2);
  });

  it("keeps a denial for 30 s only, so a new RoleBinding takes effect soon", async () => {
    const auth = newAuth();
    expect(await auth.decide("Bearer web-token", "GET", "/metrics")).toMatchObject({ status: 403 });
    api.allowed.add(`${stranger.username} get /metrics`);
    clock += 20_000;
    expect(await auth.decide("Bearer web-token", "GET", "/metrics")).toMatchObject({ status: 403 });
    clock += 20_000;
    expect((await auth.decide("Bearer web-token", "GET", "/metrics")).allowed).toBe(true);
  });

  it("shares one review between concurrent requests with the same token", async () => {
    const auth = newAuth();
    const all = await Promise.all(
      Array.from({ length: 10 }, () => auth.decide("Bearer prom-token", "GET", "/metrics")),
    );
    expect(all.every((d) => d.allowed)).toBe(true);
    expect(api.count("TokenReview")).toBe(1);
    expect(api.count("SubjectAccessReview")).toBe(1);
  });

  it("answers 500 when a review fails, naming the missing RBAC, and caches no failure", async () => {
    const auth = newAuth();
    api.failWith = 403;
    const d = await auth.decide("Bearer prom-token", "GET", "/metrics");
    expect(d).toMatchObject({ allowed: false, status: 500, message: "Authentication failed" });
    expect(d.allowed || d.detail).toMatch(/needs "create" on tokenreviews.authentication.k8s.io/);
    api.failWith = undefined;
    expect((await auth.decide("Bearer prom-token", "GET", "/metrics")).allowed).toBe(true);
  });

  it("keys its caches by the token's hash: one token's decision never serves another", async () => {
    const auth = newAuth();
    expect((await auth.decide("Bearer prom-token", "GET", "/metrics")).allowed).toBe(true);
    expect(await auth.decide("Bearer web-token", "GET", "/metrics")).toMatchObject({ status: 403 });
    expect(await auth.decide("Bearer prom-token-2", "GET", "/metrics")).toMatchObject({ status: 401 });
  });
});
