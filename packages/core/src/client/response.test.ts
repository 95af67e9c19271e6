// Table tests of reading the API server's answers: failure Statuses, transport errors, watch lines, backoff.
import { Readable } from "node:stream";
import { gzipSync } from "node:zlib";
import type { Dispatcher } from "undici";
import { describe, expect, it } from "vitest";
import { ApiError } from "./errors.ts";
import { backoff, bodyText, errorFrom, toApiError, watchEvent } from "./response.ts";

function answer(statusCode: number, body: string | Buffer, headers: Record<string, string> = {}) {
  const stream = Readable.from([Buffer.from(body)]) as Readable & { text(): Promise<string> };
  stream.text = async () => Buffer.from(body).toString("utf8");
  return { statusCode, headers, body: stream } as unknown as Dispatcher.ResponseData;
}

describe("errorFrom", () => {
  it.each([
    [
      404,
      '{"reason":"NotFound","message":"pods \\"a\\" not found"}',
      {},
      "NotFound",
      'GET /p: pods "a" not found',
      undefined,
    ],
    [
      429,
      '{"reason":"TooManyRequests","message":"slow down"}',
      { "retry-after": "3" },
      "TooManyRequests",
      "GET /p: slow down",
      3,
    ],
    [503, "upstream down", { "retry-after": "0" }, "", "GET /p: upstream down", undefined],
    [500, "", {}, "", "GET /p: HTTP 500", undefined],
  ])("%i %s", async (code, body, headers, reason, message, retryAfter) => {
    const err = await errorFrom(answer(code, body, headers), "GET", "/p");
    expect([err.code, err.reason, err.message, err.retryAfterSeconds]).toEqual([
      code,
      reason,
      message,
      retryAfter,
    ]);
  });
});

describe("bodyText", () => {
  it("inflates a gzip body and keeps an empty one empty", async () => {
    expect(await bodyText(answer(200, gzipSync("hello"), { "content-encoding": "gzip" }))).toBe("hello");
    expect(await bodyText(answer(200, Buffer.alloc(0), { "content-encoding": "gzip" }))).toBe("");
    expect(await bodyText(answer(200, "plain"))).toBe("plain");
  });
});

describe("toApiError", () => {
  it("makes a transport failure an ApiError of code 0 and lets aborts and ApiErrors pass", () => {
    const refused = toApiError(Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" }));
    expect(refused).toBeInstanceOf(ApiError);
    expect([(refused as ApiError).code, (refused as ApiError).reason]).toEqual([0, "ECONNREFUSED"]);
    const abort = new DOMException("aborted", "AbortError");
    expect(toApiError(abort)).toBe(abort);
    const api = new ApiError(409, "Conflict", "x");
    expect(toApiError(api)).toBe(api);
  });
});

describe("watchEvent", () => {
  const line = JSON.stringify({
    type: "MODIFIED",
    object: { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "a" }, data: { k: "v" } },
  });
  it.each([
    [false, true],
    [true, false],
  ])("partial=%s keeps data: %s", (partial, hasData) => {
    const event = watchEvent<Record<string, unknown>>(line, partial);
    expect(event.type).toBe("MODIFIED");
    expect("data" in (event.object as object)).toBe(hasData);
  });
});

describe("backoff", () => {
  it.each([
    [1, undefined, 100, 200],
    [3, undefined, 400, 800],
    [20, undefined, 5_000, 10_000],
    [1, 2, 2_000, 2_000],
    [1, 60, 10_000, 10_000],
  ])("attempt %i retry-after %s -> %i..%i ms", (attempt, retryAfter, min, max) => {
    const ms = backoff(attempt, retryAfter);
    expect(ms).toBeGreaterThanOrEqual(min);
    expect(ms).toBeLessThanOrEqual(max);
  });
});
