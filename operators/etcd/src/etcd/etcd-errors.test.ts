// Table tests of how etcd's failures are read: when a token is wanted, what may be retried on another endpoint.
import { describe, expect, it } from "vitest";
import {
  connectionRefused,
  describe as describeError,
  EtcdAuthError,
  EtcdError,
  needsToken,
} from "./etcd-errors.ts";

describe("needsToken", () => {
  it.each([
    [16, "etcdserver: invalid auth token", true],
    [3, "etcdserver: user name is empty", true],
    [3, "etcdserver: revision of auth store is old", true],
    [3, "etcdserver: authentication failed, invalid user ID or password", false],
    [9, "etcdserver: authentication is not enabled", false],
    [undefined, "connection refused", false],
  ])("code %j %s -> %s", (code, message, expected) => {
    expect(needsToken(code, message)).toBe(expected);
  });
});

describe("connectionRefused and describe", () => {
  it.each([
    [Object.assign(new Error("connect ECONNREFUSED 10.0.0.1:2379"), { code: "ECONNREFUSED" }), true],
    [Object.assign(new Error("fetch failed"), { cause: { code: "ECONNREFUSED" } }), true],
    [Object.assign(new Error("socket hang up"), { code: "ECONNRESET" }), false],
  ])("%s -> %s", (err, refused) => {
    expect(connectionRefused(err)).toBe(refused);
  });
  it.each([
    [new DOMException("The operation timed out.", "TimeoutError"), "timed out"],
    [Object.assign(new Error("connect failed"), { code: "ECONNRESET" }), "ECONNRESET connect failed"],
    [Object.assign(new Error("connect ECONNREFUSED x"), { code: "ECONNREFUSED" }), "connect ECONNREFUSED x"],
    ["plain", "plain"],
  ])("%s -> %s", (err, text) => {
    expect(describeError(err)).toBe(text);
  });
});

describe("EtcdAuthError", () => {
  it("is an EtcdError with its reason, endpoints and etcd's message", () => {
    const err = new EtcdAuthError("WrongPassword", "auth failed", ["https://a:2379"], "etcdserver: bad", 3);
    expect(err).toBeInstanceOf(EtcdError);
    expect([err.name, err.reason, err.endpoints, err.etcdMessage, err.code]).toEqual([
      "EtcdAuthError",
      "WrongPassword",
      ["https://a:2379"],
      "etcdserver: bad",
      3,
    ]);
  });
});
