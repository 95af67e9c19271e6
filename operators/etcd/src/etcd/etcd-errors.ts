// How an etcd call fails: EtcdError (the endpoints tried, etcd's message and gRPC code), EtcdAuthError (no or
// wrong credentials), the gRPC codes the client acts on, and the transport errors it may retry elsewhere.

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

/** gRPC codes of etcd's auth answers. */
const GRPC_INVALID_ARGUMENT = 3;
export const GRPC_FAILED_PRECONDITION = 9;
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

/** True when the request never reached the endpoint (so it is safe to try another). */
export function connectionRefused(err: unknown): boolean {
  const e = err as { code?: string; cause?: { code?: string } };
  return e.code === "ECONNREFUSED" || e.cause?.code === "ECONNREFUSED";
}

/** gRPC UNAVAILABLE: the member cannot serve the call now (no leader, a learner, stopping); another may. */
export const GRPC_UNAVAILABLE = 14;

/** A transport error in a few words ("timed out", "ECONNREFUSED connect ..."). */
export function describe(err: unknown): string {
  if (err instanceof Error) {
    if (err.name === "TimeoutError") return "timed out";
    const code = (err as { code?: unknown }).code;
    return typeof code === "string" && !err.message.includes(code) ? `${code} ${err.message}` : err.message;
  }
  return String(err);
}
