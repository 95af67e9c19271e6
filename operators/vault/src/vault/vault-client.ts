// A small client for the Vault (and OpenBao) HTTP API: the sys/ and auth/token calls the operator makes on one
// node. TLS is verified against the cluster CA; when dialling a pod IP the pod's DNS name is the TLS servername.
import { Agent, request } from "undici";

/** Where and how to reach one Vault node. */
export interface VaultNodeOptions {
  /** Base URL, e.g. "https://10.244.0.7:8200". */
  address: string;
  /** PEM CA bundle the server certificate must chain to. */
  ca: string;
  /** Name the certificate must carry (default: the address's host). */
  servername?: string;
  /** Token sent as X-Vault-Token on authenticated calls. */
  token?: string;
  /** Per-request timeout (default 5 s). */
  timeoutMs?: number;
}

/** Options of one call. */
export interface CallOptions {
  signal?: AbortSignal;
}

/** Options of {@link VaultClient.call}. */
interface RequestOptions extends CallOptions {
  /** Send the token (default true when the client has one). */
  token?: boolean;
  /**
   * No deadline of the client's own: the call ends when Vault answers, the signal aborts, or the connection breaks
   * (a dead peer is found by TCP keepalive). Only the connection's setup keeps the timeout: nothing is sent before it.
   */
  untimed?: boolean;
}

/** An error answer of Vault (or no answer): the path, the HTTP status (0 when unreachable) and Vault's errors. */
export class VaultError extends Error {
  readonly status: number;
  readonly path: string;
  readonly errors: string[];
  /** For no answer (status 0): the connection's error code, e.g. ECONNREFUSED or UNABLE_TO_VERIFY_LEAF_SIGNATURE. */
  readonly code: string | undefined;
  constructor(path: string, status: number, errors: string[], message?: string, code?: string) {
    super(message ?? `Vault ${path}: ${status === 0 ? "no answer" : `HTTP ${status}`}: ${errors.join("; ")}`);
    this.name = "VaultError";
    this.status = status;
    this.path = path;
    this.errors = errors;
    this.code = code;
  }
}

/**
 * Node's codes for a server certificate the client refuses (not signed by a trusted CA, self-signed, expired, or
 * not naming the servername): the node answered, with a certificate the operator does not trust.
 */
const CERTIFICATE_ERROR_CODES = new Set([
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "UNABLE_TO_GET_ISSUER_CERT",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
  "SELF_SIGNED_CERT_IN_CHAIN",
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "CERT_SIGNATURE_FAILURE",
  "CERT_NOT_YET_VALID",
  "CERT_HAS_EXPIRED",
  "CERT_UNTRUSTED",
  "CERT_REJECTED",
  "ERR_TLS_CERT_ALTNAME_INVALID",
]);

/** True when `err` is a call that failed because the client refused the node's certificate. */
export function certificateRejected(err: unknown): boolean {
  return err instanceof VaultError && err.status === 0 && CERTIFICATE_ERROR_CODES.has(err.code ?? "");
}

/** GET /v1/sys/health, whatever the node's state (every state answers 200 with the query the client sends). */
export interface VaultHealth {
  initialized: boolean;
  sealed: boolean;
  standby: boolean;
  performance_standby?: boolean;
  version: string;
  cluster_id?: string;
  cluster_name?: string;
  server_time_utc?: number;
}

/** GET /v1/sys/seal-status (also the answer of PUT /v1/sys/unseal). */
export interface VaultSealStatus {
  type: string;
  initialized: boolean;
  sealed: boolean;
  /** Threshold. */
  t: number;
  /** Shares. */
  n: number;
  /** Keys entered so far towards the threshold. */
  progress: number;
  version: string;
  cluster_id?: string;
  cluster_name?: string;
}

/** PUT /v1/sys/init's answer: the only time Vault ever shows the keys and the root token. */
export interface VaultInitResponse {
  keys: string[];
  keys_base64: string[];
  root_token: string;
}

/**
 * GET /v1/sys/leader: this node's own view (unauthenticated, answered without a quorum): whether it leads, whom it
 * follows, and with integrated storage its own raft indexes (0 while sealed: raft runs only once unsealed).
 */
export interface VaultLeaderStatus {
  ha_enabled: boolean;
  is_self: boolean;
  leader_address: string;
  leader_cluster_address?: string;
  /** The highest raft index this node knows is committed. */
  raft_committed_index?: number;
  /** The highest raft index this node has applied to its data. */
  raft_applied_index?: number;
}

/** One server of the raft configuration. */
export interface VaultRaftServer {
  node_id: string;
  address: string;
  leader: boolean;
  protocol_version: string;
  voter: boolean;
}

/** GET /v1/auth/token/lookup-self (data). */
export interface VaultTokenInfo {
  accessor: string;
  policies: string[];
  ttl: number;
  period?: number;
  orphan: boolean;
  renewable: boolean;
  display_name: string;
}

/** GET /v1/sys/storage/raft/autopilot/state (data; the fields the operator reads). */
export interface VaultAutopilotState {
  healthy: boolean;
  failure_tolerance: number;
  /** Vault Enterprise (redundancy zones) only. */
  optimistic_failure_tolerance?: number;
  leader: string;
  voters?: string[];
  servers: Record<string, { id: string; healthy: boolean; status: string; last_index?: number }>;
}

/** GET /v1/sys/storage/raft/autopilot/configuration (data), also the body of its POST. */
export interface VaultAutopilotConfiguration {
  cleanup_dead_servers: boolean;
  dead_server_last_contact_threshold: string;
  last_contact_threshold: string;
  max_trailing_logs: number;
  min_quorum: number;
  server_stabilization_time: string;
  disable_upgrade_migration?: boolean;
}

/** The health query: each state answers 200 so the body is always read; the body says the state. */
const HEALTH_QUERY =
  "standbycode=200&sealedcode=200&uninitcode=200&drsecondarycode=200&performancestandbycode=200";

/** One Vault node. Close it (or share it) when done: it keeps a connection pool. */
export class VaultClient {
  readonly address: string;
  readonly #agent: Agent;
  readonly #token: string | undefined;
  readonly #timeoutMs: number;

  constructor(options: VaultNodeOptions) {
    this.address = options.address.replace(/\/$/, "");
    this.#token = options.token;
    this.#timeoutMs = options.timeoutMs ?? 5_000;
    this.#agent = new Agent({
      connect: {
        ca: options.ca,
        ...(options.servername === undefined ? {} : { servername: options.servername }),
        timeout: this.#timeoutMs,
      },
      keepAliveTimeout: 10_000,
    });
  }

  /** The same node with another token (shares nothing; close both). */
  withToken(token: string, options: Omit<VaultNodeOptions, "address" | "token">): VaultClient {
    return new VaultClient({ ...options, address: this.address, token });
  }

  async close(): Promise<void> {
    await this.#agent.close();
  }

  /** Sends one request; resolves with the parsed JSON body (undefined for 204), throws VaultError otherwise. */
  async call<T>(
    method: "GET" | "PUT" | "POST" | "DELETE",
    path: string,
    body?: unknown,
    options: RequestOptions = {},
  ): Promise<T> {
    const headers: Record<string, string> = {};
    if (body !== undefined) headers["content-type"] = "application/json";
    if (options.token !== false && this.#token !== undefined) headers["x-vault-token"] = this.#token;
    const signals = options.untimed ? [] : [AbortSignal.timeout(this.#timeoutMs)];
    if (options.signal !== undefined) signals.push(options.signal);
    const signal = signals.length === 0 ? undefined : AbortSignal.any(signals);
    let res: Awaited<ReturnType<typeof request>>;
    try {
      res = await request(`${this.address}${path}`, {
        method,
        headers,
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        dispatcher: this.#agent,
        ...(signal === undefined ? {} : { signal }),
        // undici's own header and body deadlines (300 s each) are off too for an untimed call.
        ...(options.untimed ? { headersTimeout: 0, bodyTimeout: 0 } : {}),
      });
    } catch (err) {
      options.signal?.throwIfAborted();
      const cause = err instanceof Error && err.cause instanceof Error ? err.cause : err;
      const message = cause instanceof Error ? cause.message : String(cause);
      const code = (cause as { code?: unknown } | undefined)?.code;
      throw new VaultError(path, 0, [message], undefined, typeof code === "string" ? code : undefined);
    }
    const text = await res.body.text();
    const json = text === "" ? undefined : safeJson(text);
    if (res.statusCode >= 400) {
      const errors = (json as { errors?: string[] } | undefined)?.errors ?? [text.slice(0, 200)];
      throw new VaultError(path, res.statusCode, errors);
    }
    return json as T;
  }

  /** The node's state: initialized, sealed, standby, version, cluster_id. */
  health(options: CallOptions = {}): Promise<VaultHealth> {
    return this.call("GET", `/v1/sys/health?${HEALTH_QUERY}`, undefined, { ...options, token: false });
  }

  sealStatus(options: CallOptions = {}): Promise<VaultSealStatus> {
    return this.call("GET", "/v1/sys/seal-status", undefined, { ...options, token: false });
  }

  /**
   * PUT /v1/sys/init: initializes the whole cluster, once. Untimed: the answer is the only copy of the keys, so the
   * client never gives up on it (an init aborted here would still finish inside Vault, keys and all).
   */
  init(shares: number, threshold: number, options: CallOptions = {}): Promise<VaultInitResponse> {
    return this.call(
      "PUT",
      "/v1/sys/init",
      { secret_shares: shares, secret_threshold: threshold },
      { ...options, token: false, untimed: true },
    );
  }

  /** Submits one unseal key share; the answer says whether the node is still sealed. */
  unseal(key: string, options: CallOptions = {}): Promise<VaultSealStatus> {
    return this.call("PUT", "/v1/sys/unseal", { key }, { ...options, token: false });
  }

  /** Discards the key shares entered so far (PUT /v1/sys/unseal {reset: true}), before trying another key set. */
  resetUnseal(options: CallOptions = {}): Promise<VaultSealStatus> {
    return this.call("PUT", "/v1/sys/unseal", { reset: true }, { ...options, token: false });
  }

  /**
   * Unseals with `keys` (the first `threshold` of them are enough); a node already unsealed is left alone.
   * Resolves with the last seal status.
   */
  async unsealWith(keys: readonly string[], options: CallOptions = {}): Promise<VaultSealStatus> {
    let status = await this.sealStatus(options);
    for (const key of keys) {
      if (!status.sealed) break;
      status = await this.unseal(key, options);
    }
    return status;
  }

  /**
   * POST /v1/sys/storage/raft/join: an uninitialized node joins the raft cluster led at `leaderApiAddr`; it then
   * needs the unseal keys to finish joining.
   */
  async raftJoin(
    leader: { apiAddr: string; caCert: string; tlsServerName?: string },
    options: CallOptions = {},
  ): Promise<boolean> {
    const res = await this.call<{ joined: boolean }>(
      "POST",
      "/v1/sys/storage/raft/join",
      {
        leader_api_addr: leader.apiAddr,
        leader_ca_cert: leader.caCert,
        ...(leader.tlsServerName === undefined ? {} : { leader_tls_servername: leader.tlsServerName }),
      },
      { ...options, token: false },
    );
    return res.joined;
  }

  /** This node's own leader view and raft indexes (GET /v1/sys/leader, no token). */
  leader(options: CallOptions = {}): Promise<VaultLeaderStatus> {
    return this.call("GET", "/v1/sys/leader", undefined, { ...options, token: false });
  }

  /** The raft servers as this node (the active one, or a standby forwarding) reports them. */
  async raftConfiguration(options: CallOptions = {}): Promise<VaultRaftServer[]> {
    const res = await this.call<{ data: { config: { servers: VaultRaftServer[] | null } } }>(
      "GET",
      "/v1/sys/storage/raft/configuration",
      undefined,
      options,
    );
    return res.data.config.servers ?? [];
  }

  /** Removes a raft peer (by node ID) through the active node. */
  async raftRemovePeer(nodeId: string, options: CallOptions = {}): Promise<void> {
    await this.call("POST", "/v1/sys/storage/raft/remove-peer", { server_id: nodeId }, options);
  }

  /** Autopilot's view: healthy servers, the leader, the voters, failure tolerance. */
  async autopilotState(options: CallOptions = {}): Promise<VaultAutopilotState> {
    const res = await this.call<{ data: VaultAutopilotState }>(
      "GET",
      "/v1/sys/storage/raft/autopilot/state",
      undefined,
      options,
    );
    return res.data;
  }

  /** GET /v1/sys/storage/raft/autopilot/configuration (durations as Go prints them, e.g. "24h0m0s"). */
  async autopilotConfiguration(options: CallOptions = {}): Promise<VaultAutopilotConfiguration> {
    const res = await this.call<{ data: VaultAutopilotConfiguration }>(
      "GET",
      "/v1/sys/storage/raft/autopilot/configuration",
      undefined,
      options,
    );
    return res.data;
  }

  /** POST /v1/sys/storage/raft/autopilot/configuration: Vault merges the fields given (a zero value changes nothing). */
  async setAutopilotConfiguration(
    config: Partial<VaultAutopilotConfiguration>,
    options: CallOptions = {},
  ): Promise<void> {
    await this.call("POST", "/v1/sys/storage/raft/autopilot/configuration", config, options);
  }

  /** PUT /v1/sys/step-down: the active node gives up leadership (a standby takes over). */
  async stepDown(options: CallOptions = {}): Promise<void> {
    await this.call("PUT", "/v1/sys/step-down", undefined, options);
  }

  /** Writes an ACL policy. */
  async writePolicy(name: string, policy: string, options: CallOptions = {}): Promise<void> {
    await this.call("PUT", `/v1/sys/policies/acl/${encodeURIComponent(name)}`, { policy }, options);
  }

  /** Creates a periodic orphan token with `policies` (no default policy); resolves with the token. */
  async createOrphanToken(
    input: { policies: string[]; period: string; displayName: string },
    options: CallOptions = {},
  ): Promise<string> {
    const res = await this.call<{ auth: { client_token: string } }>(
      "POST",
      "/v1/auth/token/create-orphan",
      {
        policies: input.policies,
        period: input.period,
        no_default_policy: true,
        display_name: input.displayName,
        renewable: true,
      },
      options,
    );
    return res.auth.client_token;
  }

  /** Writes (creates or replaces) the token role `name` (auth/token/roles/<name>). */
  async writeTokenRole(
    name: string,
    body: Record<string, unknown>,
    options: CallOptions = {},
  ): Promise<void> {
    await this.call("POST", `/v1/auth/token/roles/${encodeURIComponent(name)}`, body, options);
  }

  /**
   * Creates a short-lived, use-limited token: against the token role `role` (auth/token/create/<role>: its policies
   * and orphan setting are the role's), or, without one, an orphan with `policies` (auth/token/create-orphan, which
   * needs sudo: the root token). Resolves with the token; it is never logged.
   */
  async createLimitedToken(
    input: { role?: string; policies?: string[]; ttl: string; numUses: number; displayName: string },
    options: CallOptions = {},
  ): Promise<string> {
    const path =
      input.role === undefined
        ? "/v1/auth/token/create-orphan"
        : `/v1/auth/token/create/${encodeURIComponent(input.role)}`;
    const res = await this.call<{ auth: { client_token: string } }>(
      "POST",
      path,
      {
        ...(input.policies === undefined ? {} : { policies: input.policies }),
        ttl: input.ttl,
        explicit_max_ttl: input.ttl,
        num_uses: input.numUses,
        no_default_policy: true,
        renewable: false,
        display_name: input.displayName,
      },
      options,
    );
    return res.auth.client_token;
  }

  /** The calling token's own information. */
  async lookupSelf(options: CallOptions = {}): Promise<VaultTokenInfo> {
    return (
      await this.call<{ data: VaultTokenInfo }>("GET", "/v1/auth/token/lookup-self", undefined, options)
    ).data;
  }

  /** Renews the calling token; resolves with its new TTL in seconds. */
  async renewSelf(options: CallOptions = {}): Promise<number> {
    return (
      await this.call<{ auth: { lease_duration: number } }>("POST", "/v1/auth/token/renew-self", {}, options)
    ).auth.lease_duration;
  }

  /** Revokes the calling token (used on the initial root token). */
  async revokeSelf(options: CallOptions = {}): Promise<void> {
    await this.call("POST", "/v1/auth/token/revoke-self", {}, options);
  }
  /**
   * Generates a new root token with the unseal keys (sys/generate-root, the OTP flow): any attempt in progress is
   * cancelled first, the keys are submitted until the threshold is reached, and the encoded token is decoded
   * with the one-time password. Used when the operator's own token is lost and no root token is kept.
   */
  async generateRoot(keys: readonly string[], options: CallOptions = {}): Promise<string> {
    const call = { ...options, token: false };
    await this.call("DELETE", "/v1/sys/generate-root/attempt", undefined, call);
    const attempt = await this.call<{ nonce: string; otp: string; required: number }>(
      "PUT",
      "/v1/sys/generate-root/attempt",
      {},
      call,
    );
    for (const key of keys) {
      const res = await this.call<{ complete: boolean; encoded_token?: string; encoded_root_token?: string }>(
        "PUT",
        "/v1/sys/generate-root/update",
        { key, nonce: attempt.nonce },
        call,
      );
      const encoded = res.encoded_token || res.encoded_root_token;
      if (res.complete && encoded) return decodeRootToken(encoded, attempt.otp);
    }
    throw new VaultError("/v1/sys/generate-root/update", 400, [
      `${keys.length} unseal keys were not enough to generate a root token (${attempt.required} needed)`,
    ]);
  }
}

/** The root token from generate-root's encoded_token: base64 (no padding) XOR the one-time password. */
export function decodeRootToken(encoded: string, otp: string): string {
  const bytes = Buffer.from(encoded, "base64");
  const pad = Buffer.from(otp, "utf8");
  if (bytes.length !== pad.length) {
    throw new Error(`generate-root: the encoded token is ${bytes.length} bytes, the OTP ${pad.length}`);
  }
  return Buffer.from(bytes.map((b, i) => b ^ (pad[i] ?? 0))).toString("utf8");
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

export { OPERATOR_POLICY, OPERATOR_POLICY_NAME } from "./policy.ts";

/** Period of the operator's token: renewed well within it (each reconcile that finds less than half left). */
export const OPERATOR_TOKEN_PERIOD = "768h";
