// Authentication and authorization of metrics scrapes by the API server, as controller-runtime's metrics
// filter (filters.WithAuthenticationAndAuthorization) and kube-rbac-proxy do: the bearer token of the
// Authorization header -> a TokenReview -> a SubjectAccessReview for the non-resource URL (path, verb).
// Decisions are cached briefly (keyed by the token's hash, never the token), so Prometheus scraping every
// 15-30 s costs no API request per scrape. 401 without a valid token, 403 when RBAC does not allow it.
import { createHash } from "node:crypto";
import { defineKind } from "../api/kinds.ts";
import type { KubeObject } from "../api/object.ts";
import type { Client } from "../client/client.ts";
import { isApiError } from "../client/errors.ts";

/** Who the API server says a token belongs to (TokenReview status.user). */
export interface UserInfo {
  username: string;
  uid?: string;
  groups?: string[];
  extra?: Record<string, string[]>;
}

/**
 * The answer to one request: served, or refused with an HTTP status and a message for the caller; `detail`
 * (for the log only) says why a review failed or what the authorizer answered.
 */
export type AuthDecision =
  | { allowed: true; user: UserInfo }
  | { allowed: false; status: 401 | 403 | 500; message: string; detail?: string; user?: UserInfo };

interface TokenReviewObject extends KubeObject {
  spec: { token: string; audiences?: string[] };
  status?: { authenticated?: boolean; user?: Partial<UserInfo>; error?: string };
}

interface SubjectAccessReviewObject extends KubeObject {
  spec: {
    user: string;
    uid?: string;
    groups?: string[];
    extra?: Record<string, string[]>;
    nonResourceAttributes: { path: string; verb: string };
  };
  status?: { allowed?: boolean; denied?: boolean; reason?: string; evaluationError?: string };
}

export const TokenReview = defineKind<TokenReviewObject>({
  group: "authentication.k8s.io",
  version: "v1",
  kind: "TokenReview",
  plural: "tokenreviews",
  namespaced: false,
});

export const SubjectAccessReview = defineKind<SubjectAccessReviewObject>({
  group: "authorization.k8s.io",
  version: "v1",
  kind: "SubjectAccessReview",
  plural: "subjectaccessreviews",
  namespaced: false,
});

export interface ApiServerAuthOptions {
  /** Creates the TokenReviews and SubjectAccessReviews (its identity needs create on both). */
  client: Client;
  /** How long a token's review is reused; default 1 min (controller-runtime's CacheTTL). */
  authenticationTtlMs?: number;
  /** How long an allowed decision is reused; default 5 min (controller-runtime's AllowCacheTTL). */
  allowTtlMs?: number;
  /** How long a denied decision is reused; default 30 s (controller-runtime's DenyCacheTTL). */
  denyTtlMs?: number;
  /** Timeout of one review request; default 10 s. */
  reviewTimeoutMs?: number;
  /** Entries kept per cache (oldest dropped first); default 4096. */
  maxEntries?: number;
  /** The clock (tests); default Date.now. */
  now?: () => number;
}

type Authenticated = { authenticated: true; user: UserInfo } | { authenticated: false };

/** A small TTL cache that also shares one in-flight lookup between concurrent callers of the same key. */
class DecisionCache<V> {
  private readonly entries = new Map<string, { value: V; expires: number }>();
  private readonly inflight = new Map<string, Promise<V>>();

  private readonly maxEntries: number;
  private readonly now: () => number;

  constructor(maxEntries: number, now: () => number) {
    this.maxEntries = maxEntries;
    this.now = now;
  }

  /** The cached value, else the one `lookup` resolves to, kept for `ttl(value)` ms; failures are not kept. */
  async get(key: string, lookup: () => Promise<V>, ttl: (value: V) => number): Promise<V> {
    const hit = this.entries.get(key);
    if (hit !== undefined) {
      if (hit.expires > this.now()) return hit.value;
      this.entries.delete(key);
    }
    const pending = this.inflight.get(key);
    if (pending !== undefined) return pending;
    const p = lookup()
      .then((value) => {
        if (this.entries.size >= this.maxEntries) {
          const oldest = this.entries.keys().next();
          if (!oldest.done) this.entries.delete(oldest.value);
        }
        this.entries.set(key, { value, expires: this.now() + ttl(value) });
        return value;
      })
      .finally(() => this.inflight.delete(key));
    this.inflight.set(key, p);
    return p;
  }
}

/** The bearer token of an Authorization header (as the API server's bearertoken authenticator reads it). */
export function bearerToken(header: string | undefined): string | undefined {
  const parts = (header ?? "").trim().split(" ");
  if (parts.length < 2 || parts[0]?.toLowerCase() !== "bearer") return undefined;
  const token = parts[1];
  return token === undefined || token === "" ? undefined : token;
}

const sha256 = (s: string) => createHash("sha256").update(s).digest("hex");

/** Delegated authentication and authorization: TokenReview, then SubjectAccessReview, both cached. */
export class ApiServerAuth {
  private readonly client: Client;
  private readonly authnTtl: number;
  private readonly allowTtl: number;
  private readonly denyTtl: number;
  private readonly timeoutMs: number;
  private readonly tokens: DecisionCache<Authenticated>;
  private readonly access: DecisionCache<{ allowed: boolean; reason: string }>;

  constructor(options: ApiServerAuthOptions) {
    this.client = options.client;
    this.authnTtl = options.authenticationTtlMs ?? 60_000;
    this.allowTtl = options.allowTtlMs ?? 300_000;
    this.denyTtl = options.denyTtlMs ?? 30_000;
    this.timeoutMs = options.reviewTimeoutMs ?? 10_000;
    const now = options.now ?? Date.now;
    const max = options.maxEntries ?? 4096;
    this.tokens = new DecisionCache(max, now);
    this.access = new DecisionCache(max, now);
  }

  /**
   * Decides one request from its Authorization header, HTTP method and URL path: 401 without a token or
   * with one the API server does not accept, 403 when the user may not `<verb>` the path, 500 when a
   * review could not be made (the reason is in the message; nothing is cached then).
   */
  async decide(authorization: string | undefined, method: string, path: string): Promise<AuthDecision> {
    const token = bearerToken(authorization);
    if (token === undefined) {
      return { allowed: false, status: 401, message: "Unauthorized: send a bearer token" };
    }
    let authn: Authenticated;
    try {
      authn = await this.tokens.get(
        sha256(token),
        () => this.reviewToken(token),
        () => this.authnTtl,
      );
    } catch (err) {
      return {
        allowed: false,
        status: 500,
        message: "Authentication failed",
        detail: reviewError(err, "tokenreviews"),
      };
    }
    if (!authn.authenticated) return { allowed: false, status: 401, message: "Unauthorized" };
    const { user } = authn;
    const verb = method.toLowerCase();
    const key = sha256(JSON.stringify([user.username, user.uid, user.groups, user.extra, verb, path]));
    let access: { allowed: boolean; reason: string };
    try {
      access = await this.access.get(
        key,
        () => this.reviewAccess(user, verb, path),
        (a) => (a.allowed ? this.allowTtl : this.denyTtl),
      );
    } catch (err) {
      return {
        allowed: false,
        status: 500,
        message: `Authorization for user ${user.username} failed`,
        detail: reviewError(err, "subjectaccessreviews"),
        user,
      };
    }
    if (!access.allowed) {
      return {
        allowed: false,
        status: 403,
        message: `Authorization denied for user ${user.username}: it needs "${verb}" on the non-resource URL ${path} (a ClusterRole rule nonResourceURLs: ["${path}"], verbs: ["${verb}"])`,
        detail: access.reason,
        user,
      };
    }
    return { allowed: true, user };
  }

  private async reviewToken(token: string): Promise<Authenticated> {
    const review = await this.client.create(
      TokenReview,
      { metadata: {}, spec: { token } },
      { signal: AbortSignal.timeout(this.timeoutMs) },
    );
    const status = review.status;
    if (status?.authenticated !== true || !status.user?.username) return { authenticated: false };
    const { username, uid, groups, extra } = status.user;
    return {
      authenticated: true,
      user: {
        username,
        ...(uid ? { uid } : {}),
        ...(groups ? { groups } : {}),
        ...(extra ? { extra } : {}),
      },
    };
  }

  private async reviewAccess(
    user: UserInfo,
    verb: string,
    path: string,
  ): Promise<{ allowed: boolean; reason: string }> {
    const review = await this.client.create(
      SubjectAccessReview,
      {
        metadata: {},
        spec: {
          user: user.username,
          ...(user.uid === undefined ? {} : { uid: user.uid }),
          ...(user.groups === undefined ? {} : { groups: user.groups }),
          ...(user.extra === undefined ? {} : { extra: user.extra }),
          nonResourceAttributes: { path, verb },
        },
      },
      { signal: AbortSignal.timeout(this.timeoutMs) },
    );
    const status = review.status;
    return {
      allowed: status?.allowed === true && status.denied !== true,
      reason: status?.reason ?? status?.evaluationError ?? "",
    };
  }
}

/** A review's failure, with what to do when it is the operator's own RBAC that is missing. */
function reviewError(err: unknown, resource: "tokenreviews" | "subjectaccessreviews"): string {
  const message = err instanceof Error ? err.message : String(err);
  if (isApiError(err) && err.code === 403) {
    const group = resource === "tokenreviews" ? "authentication.k8s.io" : "authorization.k8s.io";
    return `${message} (the operator's ServiceAccount needs "create" on ${resource}.${group})`;
  }
  return message;
}
