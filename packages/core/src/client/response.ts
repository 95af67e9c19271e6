// Reading the API server's answers: bodies (inflated when gzip-compressed), watch lines, failure Statuses as
// ApiError (with Retry-After), transport failures, and the backoff between retries.
import type { Readable } from "node:stream";
import { promisify } from "node:util";
import { createGunzip, gunzip } from "node:zlib";
import type { Dispatcher } from "undici";
import type { KubeObject } from "../api/object.ts";
import type { WatchEvent } from "./client-options.ts";
import { ApiError, type ApiStatus } from "./errors.ts";
import { toPartialObjectMetadata } from "./metadata-only.ts";

/** Transport failures worth retrying (a refused connection always; the others for GETs only). */
export const RETRIABLE_NET = new Set(["ECONNREFUSED", "ECONNRESET", "EPIPE", "UND_ERR_SOCKET", "ETIMEDOUT"]);

const gunzipAsync = promisify(gunzip);

function isGzip(res: Dispatcher.ResponseData): boolean {
  return (
    String(res.headers["content-encoding"] ?? "")
      .trim()
      .toLowerCase() === "gzip"
  );
}

/** A response body as sent, or inflated when the server compressed it. */
export function decoded(res: Dispatcher.ResponseData): Readable {
  if (!isGzip(res)) return res.body;
  const inflate = createGunzip({ chunkSize: 128 * 1024 });
  res.body.once("error", (err) => inflate.destroy(err));
  inflate.once("close", () => res.body.destroy());
  return res.body.pipe(inflate);
}

/** A response body as text, inflated when the server compressed it (an empty body stays empty). */
export async function bodyText(res: Dispatcher.ResponseData): Promise<string> {
  if (!isGzip(res)) return res.body.text();
  const chunks: Buffer[] = [];
  for await (const chunk of res.body) chunks.push(chunk as Buffer);
  const raw = Buffer.concat(chunks);
  return raw.length === 0 ? "" : (await gunzipAsync(raw)).toString("utf8");
}

/** One line of a watch stream; with `partial`, objects reduced to metadata (see toPartialObjectMetadata). */
export function watchEvent<T>(line: string, partial: boolean): WatchEvent<T> {
  const event = JSON.parse(line) as WatchEvent<T>;
  if (partial && event.type !== "ERROR")
    event.object = toPartialObjectMetadata(event.object as KubeObject) as T;
  return event;
}

/** Exponential backoff 200 ms x 2^n (cap 10 s) with jitter, or the server's Retry-After (cap 10 s). */
export function backoff(attempt: number, retryAfterSeconds: number | undefined): number {
  if (retryAfterSeconds !== undefined) return Math.min(retryAfterSeconds, 10) * 1000;
  const base = Math.min(200 * 2 ** (attempt - 1), 10_000);
  return base / 2 + Math.random() * (base / 2);
}

/** The ApiError of a failed answer: its code, the Status reason and message, and Retry-After when given. */
export async function errorFrom(
  res: Dispatcher.ResponseData,
  method: string,
  path: string,
): Promise<ApiError> {
  const text = await bodyText(res).catch(() => "");
  let status: ApiStatus | undefined;
  try {
    status = JSON.parse(text) as ApiStatus;
  } catch {
    status = undefined;
  }
  const retryAfter = Number(res.headers["retry-after"]);
  const message = status?.message ?? (text || `HTTP ${res.statusCode}`);
  return new ApiError(
    res.statusCode,
    status?.reason ?? "",
    `${method} ${path}: ${message}`,
    status,
    Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter : undefined,
  );
}

/** A transport failure as an ApiError of code 0 (its error code as the reason); aborts and ApiErrors pass. */
export function toApiError(err: unknown): Error {
  if (err instanceof ApiError) return err;
  if ((err as { name?: string }).name === "AbortError") return err as Error;
  const e = err as { code?: string; message?: string };
  return new ApiError(
    0,
    e.code ?? "Transport",
    `transport error: ${e.message ?? String(err)}`,
    undefined,
    undefined,
  );
}
