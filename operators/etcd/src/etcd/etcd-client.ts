// A small typed client for etcd's v3 API through its JSON gateway (POST /v3/..., base64 keys and values).
// HTTPS endpoints with a CA and a client certificate are supported (the tls option); plain HTTP otherwise. With the
// auth option, a cluster with authentication on is called with a token (POST /v3/auth/authenticate), fetched when
// etcd asks for one and fetched again once per request when etcd calls it invalid or stale.
import { createHash } from "node:crypto";
import { Agent, type Dispatcher, request } from "undici";

/** Default timeout of one request to one endpoint. */
export const DEFAULT_ETCD_TIMEOUT_MS = 5_000;

/** Options of an {@link EtcdClient}. */
export interface EtcdClientOptions {
  /** Client URLs (e.g. "http://10.0.0.1:2379", or https:// with `tls`), tried in order until one answers. */
  endpoints: string[];
  /** For https:// endpoints: the CA that signed the members' certificates, and a client certificate. */
  tls?: EtcdClientTLS;
  /** Timeout of one request to one endpoint (default {@link DEFAULT_ETCD_TIMEOUT_MS}). */
  timeoutMs?: number;
  /** A user and password to authenticate with when the cluster has authentication on. */
  auth?: EtcdClientAuth;
}

/** An etcd user's credentials (the password is never put in a message or log). */
export interface EtcdClientAuth {
  username: string;
  password: string;
}

/** PEM texts of an etcd client's TLS: the CA (bundle) to trust, and the client certificate and key. */
export interface EtcdClientTLS {
  ca: string;
  cert: string;
  key: string;
}

/** Agents by TLS material, so clients made per reconcile share connections (bounded: renewals add entries). */
const agents = new Map<string, Agent>();
const MAX_AGENTS = 64;

/**
 * The undici Agent for `tls`. Members are reached by pod IP, which no certificate names: the server
 * certificate is verified against the CA (the per-cluster CA is the identity), not against the address.
 */
export function tlsAgent(tls: EtcdClientTLS): Agent {
  const id = createHash("sha256")
    .update(tls.ca)
    .update("\0")
    .update(tls.cert)
    .update("\0")
    .update(tls.key)
    .digest("hex");
  const existing = agents.get(id);
  if (existing !== undefined) return existing;
  const agent = new Agent({
    connect: {
      ca: tls.ca,
      cert: tls.cert,
      key: tls.key,
      rejectUnauthorized: true,
      checkServerIdentity: () => undefined,
    },
  });
  agents.set(id, agent);
  if (agents.size > MAX_AGENTS) {
    const [oldest] = agents;
    if (oldest !== undefined) {
      agents.delete(oldest[0]);
      void oldest[1].close();
    }
  }
  return agent;
}

/** Per-call options. */
export interface CallOptions {
  /** Aborts the call; no further endpoint is tried. */
  signal?: AbortSignal;
  /** Timeout of one request to one endpoint, overriding the client's. */
  timeoutMs?: number;
}

/** Response header every etcd call returns. Member and cluster IDs are decimal strings (uint64). */
export interface EtcdHeader {
  clusterId: string;
  memberId: string;
  revision: number;
  raftTerm: number;
}

/** One member of etcd's member list. IDs are decimal strings, as the JSON gateway returns uint64. */
export interface EtcdMember {
  id: string;
  /** "" until the member has started once. */
  name: string;
  peerURLs: string[];
  /** Empty until the member has started once. */
  clientURLs: string[];
  isLearner: boolean;
}

/** The member list and the header of the member that answered. */
export interface EtcdMemberList {
  header: EtcdHeader;
  members: EtcdMember[];
}

/** Status of one member, from its own endpoint. */
export interface EtcdStatus {
  /** The endpoint asked. */
  endpoint: string;
  header: EtcdHeader;
  /** The answering member's ID (header.memberId). */
  memberId: string;
  /** The leader's member ID as this member sees it ("0" when it knows no leader). */
  leader: string;
  version: string;
  dbSize: number;
  dbSizeInUse: number;
  raftIndex: number;
  raftTerm: number;
  raftAppliedIndex: number;
  isLearner: boolean;
  /** Alarms and errors the member reports (e.g. "NOSPACE"). */
  errors: string[];
}

/** Health of one member, from GET /readyz. */
export interface EtcdHealth {
  endpoint: string;
  healthy: boolean;
  /** Why the member is not healthy (the response text or the connection error). */
  reason?: string;
}

/** A hash of a member's key-value store at a revision, to compare members. */
export interface EtcdHashKV {
  endpoint: string;
  memberId: string;
  hash: number;
  /** The revision the hash was computed at. */
  hashRevision: number;
  /** The member's compacted revision (-1 if never compacted). */
  compactRevision: number;
}

/** An alarm raised by a member (etcd's Maintenance.Alarm). */
export interface EtcdAlarm {
  /** Decimal ID of the member that raised it. */
  memberId: string;
  /** "NOSPACE" (the database reached its quota) or "CORRUPT" (a member's data differs from the others'). */
  alarm: string;
}

/** etcd's AlarmType enum, for a gateway that answers numbers. */
const ALARM_TYPES = ["NONE", "NOSPACE", "CORRUPT"];

/** A failed etcd call: names the endpoint(s) and, when etcd answered, etcd's message and gRPC code. */
export class EtcdError extends Error {
  /** The endpoints that were tried. */
  readonly endpoints: string[];
  /** etcd's error message, e.g. "etcdserver: Peer URLs already exists" (absent for a transport error). */
  readonly etcdMessage: string | undefined;
  /** gRPC status code etcd returned (absent for a transport error). */
  readonly code: number | undefined;

  constructor(message: string, endpoints: string[], etcdMessage?: string, code?: number) {
    super(message);
    this.name = "EtcdError";
    this.endpoints = endpoints;
    this.etcdMessage = etcdMessage;
    this.code = code;
  }
}

/**
 * etcd refused a call for want of credentials: `NoCredentials` (authentication is on and the client has none),
 * `WrongPassword` (etcd rejected the user and password).
 */
export class EtcdAuthError extends EtcdError {
  readonly reason: "NoCredentials" | "WrongPassword";

  constructor(
    reason: "NoCredentials" | "WrongPassword",
    message: string,
    endpoints: string[],
    etcdMessage?: string,
    code?: number,
  ) {
    super(message, endpoints, etcdMessage, code);
    this.name = "EtcdAuthError";
    this.reason = reason;
  }
}

/** Tokens by credentials and endpoints, so clients made per reconcile do not authenticate each time (bounded). */
const tokens = new Map<string, string>();
const MAX_TOKENS = 256;

/** gRPC codes of etcd's auth answers. */
const GRPC_INVALID_ARGUMENT = 3;
const GRPC_FAILED_PRECONDITION = 9;
const GRPC_UNAUTHENTICATED = 16;

/**
 * True when etcd refused the call for want of a (valid, current) token: "user name is empty" (none sent while auth
 * is on), "invalid auth token" (expired, or from another member's restart) or "revision of auth store is old".
 */
export function needsToken(code: number | undefined, message: string): boolean {
  if (code === GRPC_UNAUTHENTICATED) return true;
  return (
    code === GRPC_INVALID_ARGUMENT &&
    (message.includes("user name is empty") || message.includes("auth store is old"))
  );
}

/** Marks a #call that changes cluster membership (see #call). */
const MUTATES = true;

/** True when the request never reached the endpoint (so it is safe to try another). */
function connectionRefused(err: unknown): boolean {
  const e = err as { code?: string; cause?: { code?: string } };
  return e.code === "ECONNREFUSED" || e.cause?.code === "ECONNREFUSED";
}

/** gRPC UNAVAILABLE: the member cannot serve the call now (no leader, a learner, stopping); another may. */
const GRPC_UNAVAILABLE = 14;

type Json = Record<string, unknown>;

/** Converts a decimal member ID (as etcd's JSON gateway returns it) to the hexadecimal form etcdctl prints. */
export function memberIdToHex(id: string): string {
  return BigInt(id).toString(16);
}

/**
 * A client of etcd's v3 JSON gateway. Cluster-wide calls try the endpoints in order until one answers
 * (a connection error, a timeout or an UNAVAILABLE answer moves to the next one); calls that take an
 * endpoint ask only that member. With `tls`, https:// endpoints are reached with the client certificate.
 */
export class EtcdClient {
  /** The client URLs, in the order they are tried. */
  readonly endpoints: string[];
  readonly #timeoutMs: number;
  readonly #dispatcher: Dispatcher | undefined;
  readonly #auth: EtcdClientAuth | undefined;
  /** Key of this client's token in the shared cache (undefined without auth). */
  readonly #tokenKey: string | undefined;

  constructor(options: EtcdClientOptions) {
    if (options.endpoints.length === 0) throw new Error("EtcdClient needs at least one endpoint");
    this.endpoints = options.endpoints.map((e) => e.replace(/\/+$/, ""));
    this.#timeoutMs = options.timeoutMs ?? DEFAULT_ETCD_TIMEOUT_MS;
    this.#dispatcher = options.tls === undefined ? undefined : tlsAgent(options.tls);
    this.#auth = options.auth;
    this.#tokenKey =
      options.auth === undefined
        ? undefined
        : createHash("sha256")
            .update(options.auth.username)
            .update("\0")
            .update(options.auth.password)
            .update("\0")
            .update([...this.endpoints].sort().join(","))
            .digest("hex");
  }

  /** True when the client was given credentials. */
  get authenticates(): boolean {
    return this.#auth !== undefined;
  }

  /** undici options shared by every request: the TLS agent, when there is one. */
  #via(): { dispatcher?: Dispatcher } {
    return this.#dispatcher === undefined ? {} : { dispatcher: this.#dispatcher };
  }

  /**
   * Lists the cluster's members. `linearizable` reads through a quorum instead of the answering member's view
   * (etcd 3.6; older servers reject the field, so it is sent only when true).
   */
  async memberList(options: CallOptions & { linearizable?: boolean } = {}): Promise<EtcdMemberList> {
    const body = options.linearizable === true ? { linearizable: true } : {};
    const res = await this.#call("member list", "/v3/cluster/member/list", body, options);
    return { header: parseHeader(res.header), members: parseMembers(res.members) };
  }

  /** Adds a learner (non-voting member) with these peer URLs; returns it (its name is "" until it starts). */
  async memberAddAsLearner(peerURLs: string[], options: CallOptions = {}): Promise<EtcdMember> {
    const res = await this.#call(
      `member add learner ${peerURLs.join(",")}`,
      "/v3/cluster/member/add",
      { peerURLs, isLearner: true },
      options,
      this.endpoints,
      MUTATES,
    );
    const [member] = parseMembers([res.member]);
    if (member === undefined) throw new EtcdError("member add: etcd returned no member", this.endpoints);
    return member;
  }

  /** Promotes a learner that has caught up with the leader to a voting member. */
  async memberPromote(id: string, options: CallOptions = {}): Promise<void> {
    await this.#call(
      `member promote ${id}`,
      "/v3/cluster/member/promote",
      { ID: id },
      options,
      this.endpoints,
      MUTATES,
    );
  }

  /** Removes a member from the cluster (its process stops on its own once it learns it). */
  async memberRemove(id: string, options: CallOptions = {}): Promise<void> {
    await this.#call(
      `member remove ${id}`,
      "/v3/cluster/member/remove",
      { ID: id },
      options,
      this.endpoints,
      MUTATES,
    );
  }

  /** Moves leadership to a voting member. The request is sent to the current leader, found by asking each endpoint. */
  async moveLeader(targetId: string, options: CallOptions = {}): Promise<void> {
    const leader = await this.#leaderEndpoint(options);
    await this.#call(
      `move leader to ${targetId}`,
      "/v3/maintenance/transfer-leadership",
      { targetID: targetId },
      options,
      [leader],
    );
  }

  /** The alarms raised in the cluster (empty when none). */
  async alarmList(options: CallOptions = {}): Promise<EtcdAlarm[]> {
    const res = await this.#call("alarm list", "/v3/maintenance/alarm", { action: "GET" }, options);
    return parseAlarms(res.alarms);
  }

  /** Disarms `alarm` raised by member `memberId` (decimal); returns the alarms that were disarmed. */
  async alarmDisarm(memberId: string, alarm: string, options: CallOptions = {}): Promise<EtcdAlarm[]> {
    const res = await this.#call(
      `alarm disarm ${alarm} of ${memberId}`,
      "/v3/maintenance/alarm",
      { action: "DEACTIVATE", memberID: memberId, alarm },
      options,
    );
    return parseAlarms(res.alarms);
  }

  /** Compacts the key-value history up to `revision` (physical: returns once the compaction is applied). */
  async compact(revision: number, options: CallOptions = {}): Promise<void> {
    await this.#call(`compact to ${revision}`, "/v3/kv/compaction", { revision, physical: true }, options);
  }

  /**
   * Defragments the database of the member at `endpoint` (only that member: it blocks reads and writes while it
   * rewrites its file, so callers do one member at a time).
   */
  async defragment(endpoint: string, options: CallOptions = {}): Promise<void> {
    const url = trimUrl(endpoint);
    await this.#call("defragment", "/v3/maintenance/defragment", {}, options, [url]);
  }

  /** Status of the member at `endpoint`. */
  async status(endpoint: string, options: CallOptions = {}): Promise<EtcdStatus> {
    const url = trimUrl(endpoint);
    const res = await this.#call("status", "/v3/maintenance/status", {}, options, [url]);
    const header = parseHeader(res.header);
    return {
      endpoint: url,
      header,
      memberId: header.memberId,
      leader: str(res.leader, "0"),
      version: str(res.version, ""),
      dbSize: num(res.dbSize),
      dbSizeInUse: num(res.dbSizeInUse),
      raftIndex: num(res.raftIndex),
      raftTerm: num(res.raftTerm),
      raftAppliedIndex: num(res.raftAppliedIndex),
      isLearner: res.isLearner === true,
      errors: Array.isArray(res.errors) ? res.errors.map(String) : [],
    };
  }

  /**
   * Whether authentication is on. Without auth etcd answers anyone; with it on only root may ask (a client without
   * credentials gets an EtcdAuthError "NoCredentials", which also says auth is on).
   */
  async authStatus(options: CallOptions = {}): Promise<{ enabled: boolean; authRevision: number }> {
    const res = await this.#call("auth status", "/v3/auth/status", {}, options);
    return { enabled: res.enabled === true, authRevision: num(res.authRevision) };
  }

  /** Adds user `name` with `password` (etcd answers "user name already exists" when it does). */
  async userAdd(name: string, password: string, options: CallOptions = {}): Promise<void> {
    await this.#call(`user add ${name}`, "/v3/auth/user/add", { name, password }, options);
  }

  /** Sets user `name`'s password. */
  async userChangePassword(name: string, password: string, options: CallOptions = {}): Promise<void> {
    await this.#call(`change password of ${name}`, "/v3/auth/user/changepw", { name, password }, options);
  }

  /** The roles of user `name`, or undefined when there is no such user. */
  async userRoles(name: string, options: CallOptions = {}): Promise<string[] | undefined> {
    try {
      const res = await this.#call(`user get ${name}`, "/v3/auth/user/get", { name }, options);
      return Array.isArray(res.roles) ? res.roles.map(String) : [];
    } catch (err) {
      if (err instanceof EtcdError && err.etcdMessage?.includes("user name not found")) return undefined;
      throw err;
    }
  }

  /** Grants `role` to user `user` (repeating it is harmless). */
  async userGrantRole(user: string, role: string, options: CallOptions = {}): Promise<void> {
    await this.#call(`grant role ${role} to ${user}`, "/v3/auth/user/grant", { user, role }, options);
  }

  /** Turns authentication on (etcd refuses it while there is no user root with role root). */
  async authEnable(options: CallOptions = {}): Promise<void> {
    await this.#call("auth enable", "/v3/auth/enable", {}, options);
  }

  /** Turns authentication off (only root may). */
  async authDisable(options: CallOptions = {}): Promise<void> {
    await this.#call("auth disable", "/v3/auth/disable", {}, options);
  }

  /** Health of the member at `endpoint` (GET /readyz). Never throws for an unhealthy or unreachable member. */
  async health(endpoint: string, options: CallOptions = {}): Promise<EtcdHealth> {
    const url = trimUrl(endpoint);
    try {
      const res = await request(`${url}/readyz`, {
        method: "GET",
        signal: this.#signal(options),
        ...this.#via(),
      });
      const text = (await res.body.text()).trim();
      if (res.statusCode === 200) return { endpoint: url, healthy: true };
      return { endpoint: url, healthy: false, reason: `HTTP ${res.statusCode}: ${text}` };
    } catch (err) {
      options.signal?.throwIfAborted();
      return { endpoint: url, healthy: false, reason: describe(err) };
    }
  }

  /** Writes a key (UTF-8 key and value); returns the revision of the write. */
  async put(key: string, value: string, options: CallOptions = {}): Promise<{ revision: number }> {
    const res = await this.#call(`put ${key}`, "/v3/kv/put", { key: b64(key), value: b64(value) }, options);
    return { revision: parseHeader(res.header).revision };
  }

  /** Reads a key (linearizable); undefined when it does not exist. */
  async get(key: string, options: CallOptions = {}): Promise<string | undefined> {
    const res = await this.#call(`get ${key}`, "/v3/kv/range", { key: b64(key) }, options);
    const kv = Array.isArray(res.kvs) ? (res.kvs[0] as Json | undefined) : undefined;
    return kv === undefined ? undefined : Buffer.from(str(kv.value, ""), "base64").toString("utf8");
  }

  /** Hash of the key-value store of the member at `endpoint` up to `revision` (0: its latest). */
  async hashKV(endpoint: string, revision = 0, options: CallOptions = {}): Promise<EtcdHashKV> {
    const url = trimUrl(endpoint);
    const res = await this.#call(
      `hashKV at revision ${revision}`,
      "/v3/maintenance/hashkv",
      { revision },
      options,
      [url],
    );
    return {
      endpoint: url,
      memberId: parseHeader(res.header).memberId,
      hash: num(res.hash),
      hashRevision: num(res.hash_revision),
      compactRevision: num(res.compact_revision, -1),
    };
  }

  /** The endpoint of the current leader: one of ours whose member is the leader, else the leader's client URL. */
  async #leaderEndpoint(options: CallOptions): Promise<string> {
    let leader: string | undefined;
    const failures: string[] = [];
    for (const endpoint of this.endpoints) {
      try {
        const s = await this.status(endpoint, options);
        if (s.leader !== "0" && s.leader === s.memberId) return endpoint;
        if (s.leader !== "0") leader = s.leader;
      } catch (err) {
        options.signal?.throwIfAborted();
        failures.push(describe(err));
      }
    }
    if (leader === undefined) {
      const why = failures.length > 0 ? `: ${failures.join("; ")}` : "";
      throw new EtcdError(
        `no etcd endpoint knows a leader (${this.endpoints.join(", ")})${why}`,
        this.endpoints,
      );
    }
    const { members } = await this.memberList(options);
    const url = members.find((m) => m.id === leader)?.clientURLs[0];
    if (url === undefined) {
      throw new EtcdError(`the etcd leader ${leader} has no client URL in the member list`, this.endpoints);
    }
    return trimUrl(url);
  }

  /**
   * POSTs `body` to `path`, trying `endpoints` in order; throws an EtcdError naming the endpoint(s). A call
   * that changes membership (`mutates`) moves to the next endpoint only when the connection was refused or
   * the member answered UNAVAILABLE: after a timeout or a dropped connection it may have been applied, and
   * repeating it elsewhere would fail misleadingly ("member not found") or act twice.
   */
  async #call(
    what: string,
    path: string,
    body: Json,
    options: CallOptions,
    endpoints = this.endpoints,
    mutates = false,
  ): Promise<Json> {
    const failures: string[] = [];
    for (const endpoint of endpoints) {
      let res: Json;
      let statusCode: number;
      try {
        ({ statusCode, res } = await this.#post(endpoint, path, body, options));
        if (statusCode !== 200 && needsToken(numOrUndefined(res.code), str(res.message, ""))) {
          // Refused before it was applied: authenticate (once per request) and send it again to the same member.
          const token = await this.#authenticate(endpoint, what, res, options);
          ({ statusCode, res } = await this.#post(endpoint, path, body, options, token));
        }
      } catch (err) {
        if (err instanceof EtcdAuthError) throw err;
        options.signal?.throwIfAborted();
        if (mutates && !connectionRefused(err)) {
          throw new EtcdError(
            `etcd ${endpoint}: ${what}: ${describe(err)} (not retried elsewhere: it may have been applied)`,
            [endpoint],
          );
        }
        failures.push(`${endpoint}: ${describe(err)}`);
        continue;
      }
      if (statusCode === 200) return res;
      const message = str(res.message, str(res.error, `HTTP ${statusCode}`));
      const code = typeof res.code === "number" ? res.code : undefined;
      if (code === GRPC_UNAVAILABLE && endpoints.length > 1) {
        failures.push(`${endpoint}: ${message}`);
        continue;
      }
      throw new EtcdError(`etcd ${endpoint}: ${what}: ${message}`, [endpoint], message, code);
    }
    const tried = endpoints.join(", ");
    throw new EtcdError(`${what}: no etcd endpoint answered (${tried}): ${failures.join("; ")}`, endpoints);
  }

  /** One POST to one endpoint, with the cached token (or `token`) when the client authenticates. */
  async #post(
    endpoint: string,
    path: string,
    body: Json,
    options: CallOptions,
    token = this.#tokenKey === undefined ? undefined : tokens.get(this.#tokenKey),
  ): Promise<{ statusCode: number; res: Json }> {
    const r = await request(`${endpoint}${path}`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        ...(token === undefined || token === "" ? {} : { authorization: token }),
      },
      body: JSON.stringify(body),
      signal: this.#signal(options),
      ...this.#via(),
    });
    return { statusCode: r.statusCode, res: parseJson(await r.body.text()) };
  }

  /**
   * Gets a token from `endpoint` after it refused `what` with `refusal`, and caches it. Throws an EtcdAuthError
   * when the client has no credentials or etcd rejects them; the message never carries the password.
   */
  async #authenticate(endpoint: string, what: string, refusal: Json, options: CallOptions): Promise<string> {
    const refused = str(refusal.message, "authentication required");
    const code = numOrUndefined(refusal.code);
    if (this.#auth === undefined || this.#tokenKey === undefined) {
      throw new EtcdAuthError(
        "NoCredentials",
        `etcd ${endpoint}: ${what}: ${refused} (authentication is on and the operator has no credentials)`,
        [endpoint],
        refused,
        code,
      );
    }
    tokens.delete(this.#tokenKey);
    const { username, password } = this.#auth;
    const { statusCode, res } = await this.#post(
      endpoint,
      "/v3/auth/authenticate",
      { name: username, password },
      options,
      undefined,
    );
    const token = str(res.token, "");
    if (statusCode === 200 && token !== "") {
      tokens.set(this.#tokenKey, token);
      if (tokens.size > MAX_TOKENS) {
        const [oldest] = tokens.keys();
        if (oldest !== undefined) tokens.delete(oldest);
      }
      return token;
    }
    const message = str(res.message, `HTTP ${statusCode}`);
    const resCode = numOrUndefined(res.code);
    if (resCode === GRPC_FAILED_PRECONDITION && message.includes("not enabled")) {
      // Auth was turned off between the two answers: the request goes again without a token.
      return "";
    }
    throw new EtcdAuthError(
      message.includes("authentication failed") ? "WrongPassword" : "NoCredentials",
      `etcd ${endpoint}: authenticate as ${username}: ${message}`,
      [endpoint],
      message,
      resCode,
    );
  }

  #signal(options: CallOptions): AbortSignal {
    const timeout = AbortSignal.timeout(options.timeoutMs ?? this.#timeoutMs);
    return options.signal === undefined ? timeout : AbortSignal.any([options.signal, timeout]);
  }
}

function describe(err: unknown): string {
  if (err instanceof Error) {
    if (err.name === "TimeoutError") return "timed out";
    const code = (err as { code?: unknown }).code;
    return typeof code === "string" && !err.message.includes(code) ? `${code} ${err.message}` : err.message;
  }
  return String(err);
}

/** The gateway answers JSON; anything else (e.g. a proxy's error page) becomes `{ message: text }`. */
function parseJson(text: string): Json {
  try {
    const v: unknown = JSON.parse(text);
    if (typeof v === "object" && v !== null) return v as Json;
  } catch {
    // not JSON: fall through
  }
  return { message: text.trim() };
}

function trimUrl(url: string): string {
  return url.replace(/\/+$/, "");
}

function b64(s: string): string {
  return Buffer.from(s, "utf8").toString("base64");
}

function str(v: unknown, fallback: string): string {
  return typeof v === "string" ? v : fallback;
}

function numOrUndefined(v: unknown): number | undefined {
  return typeof v === "number" ? v : undefined;
}

/** Reads a number the gateway sends as a JSON number or (int64/uint64) a decimal string; absent -> fallback. */
function num(v: unknown, fallback = 0): number {
  if (typeof v === "number") return v;
  if (typeof v === "string" && v !== "") return Number(v);
  return fallback;
}

function parseHeader(v: unknown): EtcdHeader {
  const h = (v ?? {}) as Json;
  return {
    clusterId: str(h.cluster_id, "0"),
    memberId: str(h.member_id, "0"),
    revision: num(h.revision),
    raftTerm: num(h.raft_term),
  };
}

function parseAlarms(v: unknown): EtcdAlarm[] {
  if (!Array.isArray(v)) return [];
  return v
    .filter((a): a is Json => typeof a === "object" && a !== null)
    .map((a) => ({
      memberId: typeof a.memberID === "number" ? String(a.memberID) : str(a.memberID, "0"),
      alarm: typeof a.alarm === "number" ? (ALARM_TYPES[a.alarm] ?? String(a.alarm)) : str(a.alarm, "NONE"),
    }))
    .filter((a) => a.alarm !== "NONE");
}

function parseMembers(v: unknown): EtcdMember[] {
  if (!Array.isArray(v)) return [];
  return v
    .filter((m): m is Json => typeof m === "object" && m !== null)
    .map((m) => ({
      id: str(m.ID, "0"),
      name: str(m.name, ""),
      peerURLs: Array.isArray(m.peerURLs) ? m.peerURLs.map(String) : [],
      clientURLs: Array.isArray(m.clientURLs) ? m.clientURLs.map(String) : [],
      isLearner: m.isLearner === true,
    }));
}
