// Errors: API server failures with their HTTP code and Status reason, and the terminal reconcile error.

/** The API server's `Status` body, as far as Capstan reads it. */
export interface ApiStatus {
  kind?: string;
  status?: string;
  message?: string;
  reason?: string;
  code?: number;
  details?: {
    name?: string;
    kind?: string;
    causes?: { reason?: string; message?: string; field?: string }[];
  };
}

/** An error answer from the API server (or a transport failure, code 0). */
export class ApiError extends Error {
  override readonly name = "ApiError";
  /** HTTP status code; 0 for a transport failure. */
  readonly code: number;
  /** The Status reason, e.g. "NotFound", "Conflict", "Expired"; for a transport failure its error code. */
  readonly reason: string;
  readonly status: ApiStatus | undefined;
  /** Seconds from a Retry-After header, when the server sent one. */
  readonly retryAfterSeconds: number | undefined;

  constructor(code: number, reason: string, message: string, status?: ApiStatus, retryAfterSeconds?: number) {
    super(message);
    this.code = code;
    this.reason = reason;
    this.status = status;
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

/** True when `err` is an {@link ApiError} (an answer of the API server, or a transport failure). */
export function isApiError(err: unknown): err is ApiError {
  return err instanceof ApiError;
}
/** 404 Not Found: the object (or its namespace, or its kind) does not exist. */
export const isNotFound = (err: unknown): boolean => isApiError(err) && err.code === 404;
/** 409 Conflict (not AlreadyExists): a write on a stale resourceVersion; re-read and try again. */
export const isConflict = (err: unknown): boolean =>
  isApiError(err) && err.code === 409 && err.reason === "Conflict";
/** 409 AlreadyExists: a create of an object that exists. */
export const isAlreadyExists = (err: unknown): boolean =>
  isApiError(err) && err.code === 409 && err.reason === "AlreadyExists";
/** 410 Gone / reason Expired: the requested resourceVersion is too old. */
export const isGone = (err: unknown): boolean =>
  isApiError(err) && (err.code === 410 || err.reason === "Expired" || err.reason === "Gone");
/** 422 Invalid: the API server's validation (schema, CEL rules, immutable fields) refused the object. */
export const isInvalid = (err: unknown): boolean => isApiError(err) && err.code === 422;
export const isTooManyRequests = (err: unknown): boolean => isApiError(err) && err.code === 429;

/**
 * A reconcile error that retrying cannot fix (e.g. an invalid spec only the operator can judge).
 * The controller records it and does not requeue; the next change to the object triggers a new reconcile.
 */
export class TerminalError extends Error {
  override readonly name = "TerminalError";
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
  }
}

export function isTerminalError(err: unknown): err is TerminalError {
  return err instanceof TerminalError;
}
