// A small typed client for etcd's v3 API through its JSON gateway (POST /v3/..., base64 keys and values).
// HTTPS endpoints with a CA and a client certificate are supported (the tls option); plain HTTP otherwise. With the
// auth option, a cluster with authentication on is called with a token (POST /v3/auth/authenticate), fetched when
// etcd asks for one and fetched again once per request when etcd calls it invalid or stale.
import { createHash } from "node:crypto";
import { type Dispatcher, request } from "undici";
import {
  connectionRefused,
  describe,
  EtcdAuthError,
  EtcdError,
  GRPC_FAILED_PRECONDITION,
  GRPC_UNAVAILABLE,
  needsToken,
} from "./etcd-errors.ts";
import {
  b64,
  type EtcdAlarm,
  type EtcdHashKV,
  type EtcdHealth,
  type EtcdMember,
  type EtcdMemberList,
  type EtcdStatus,
  type Json,
  num,
  numOrUndefined,
  parseAlarms,
  parseHeader,
  parseJson,
  parseMembers,
  str,
} from "./etcd-messages.ts";
import { type EtcdClientTLS, tlsAgent } from "./etcd-tls-agent.ts";

// The answers' types, the errors and the TLS agents live in modules of their own; exported from here too.
export { EtcdAuthError, EtcdError, needsToken } from "./etcd-errors.ts";
export {
  type EtcdAlarm,
  type EtcdHashKV,
  type EtcdHeader,
  type EtcdHealth,
  type EtcdMember,
  type EtcdMemberList,
  type EtcdStatus,
  memberIdToHex,
} from "./etcd-messages.ts";
export { type EtcdClientTLS, tlsAgent } from "./etcd-tls-agent.ts";

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

/** Per-call options. */
export interface CallOptions {
  /** Aborts the call; no further endpoint is tried. */
  signal?: AbortSignal;
  /** Timeout of one request to one endpoint, overriding the client's. */
  timeoutMs?: number;
}

/** Tokens by credentials and endpoints, so clients made per reconcile do not authenticate each time (bounded). */
const tokens = new Map<string, string>();
const MAX_TOKENS = 256;
/** Marks a #call that changes cluster membership (see #call). */
const MUTATES = true;

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

function trimUrl(url: string): string {
  return url.replace(/\/+$/, "");
}
