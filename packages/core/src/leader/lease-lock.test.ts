// Tests for the Lease <-> LeaderElectionRecord mapping and LeaseLock's requests, with a stub client (no server).
import { describe, expect, it, vi } from "vitest";
import { Lease } from "../api/kinds.ts";
import type { Client } from "../client/client.ts";
import { ApiError } from "../client/errors.ts";
import {
  formatMicroTime,
  type LeaderElectionRecord,
  LeaseLock,
  leaseSpecFromRecord,
  recordFromLeaseSpec,
} from "./lease-lock.ts";

const record: LeaderElectionRecord = {
  holderIdentity: "node-1_0d6f4b6e-8d53-4c37-9d1b-0f1c8a6f2b11",
  leaseDurationSeconds: 15,
  acquireTime: "2026-11-29T22:00:00.000000Z",
  renewTime: "2026-11-29T22:00:04.250000Z",
  leaseTransitions: 3,
};

describe("Lease mapping", () => {
  it("formats epoch milliseconds as a MicroTime", () => {
    expect(formatMicroTime(Date.UTC(2026, 10, 29, 22, 0, 0, 123))).toBe("2026-11-29T22:00:00.123000Z");
    expect(formatMicroTime(0)).toBe("1970-01-01T00:00:00.000000Z");
  });

  it("writes every record field into the spec and reads it back unchanged", () => {
    const spec = leaseSpecFromRecord(record);
    expect(spec).toEqual({
      holderIdentity: record.holderIdentity,
      leaseDurationSeconds: 15,
      acquireTime: "2026-11-29T22:00:00.000000Z",
      renewTime: "2026-11-29T22:00:04.250000Z",
      leaseTransitions: 3,
    });
    expect(recordFromLeaseSpec(spec)).toEqual(record);
  });

  it("keeps an empty holder (a released lease) and omits empty times", () => {
    const released = {
      ...record,
      holderIdentity: "",
      leaseDurationSeconds: 1,
      acquireTime: "",
      renewTime: "",
    };
    expect(leaseSpecFromRecord(released)).toEqual({
      holderIdentity: "",
      leaseDurationSeconds: 1,
      leaseTransitions: 3,
    });
  });

  it("reads missing spec fields as empty values", () => {
    const empty = {
      holderIdentity: "",
      leaseDurationSeconds: 0,
      acquireTime: "",
      renewTime: "",
      leaseTransitions: 0,
    };
    expect(recordFromLeaseSpec(undefined)).toEqual(empty);
    expect(recordFromLeaseSpec({})).toEqual(empty);
    expect(recordFromLeaseSpec({ holderIdentity: "b", leaseTransitions: 2 })).toEqual({
      ...empty,
      holderIdentity: "b",
      leaseTransitions: 2,
    });
  });
});

/** The Lease the stub API server holds. */
const stored = {
  apiVersion: "coordination.k8s.io/v1",
  kind: "Lease",
  metadata: {
    name: "op-lock",
    namespace: "ops",
    resourceVersion: "41",
    labels: { app: "op" },
  },
  spec: { ...leaseSpecFromRecord(record), preferredHolder: "node-2" },
};

function stubClient(get: () => Promise<unknown>) {
  const client = {
    get: vi.fn(get),
    create: vi.fn(async (_kind: unknown, obj: { metadata: object }) => ({
      ...obj,
      metadata: { ...obj.metadata, resourceVersion: "1" },
    })),
    update: vi.fn(async (_kind: unknown, obj: { metadata: object }) => ({
      ...obj,
      metadata: { ...obj.metadata, resourceVersion: "42" },
    })),
  };
  return {
    client,
    lock: new LeaseLock({
      client: client as unknown as Client,
      namespace: "ops",
      name: "op-lock",
      identity: "me",
    }),
  };
}

describe("LeaseLock", () => {
  it("validates its options and describes itself as namespace/name", () => {
    const { lock } = stubClient(async () => stored);
    expect(lock.describe()).toBe("ops/op-lock");
    expect(lock.identity).toBe("me");
    const client = {} as Client;
    expect(() => new LeaseLock({ client, namespace: "ops", name: "op-lock", identity: "" })).toThrow(
      /identity/,
    );
    expect(() => new LeaseLock({ client, namespace: "", name: "op-lock", identity: "me" })).toThrow(
      /namespace/,
    );
  });

  it("reads the record and resourceVersion, and undefined when the Lease does not exist", async () => {
    const { client, lock } = stubClient(async () => stored);
    const signal = new AbortController().signal;
    expect(await lock.get(signal)).toEqual({ record, version: "41" });
    expect(client.get).toHaveBeenCalledWith(Lease, "op-lock", "ops", signal);

    const missing = stubClient(async () => {
      throw new ApiError(404, "NotFound", 'leases "op-lock" not found');
    });
    expect(await missing.lock.get()).toBeUndefined();
    const down = stubClient(async () => {
      throw new ApiError(503, "ServiceUnavailable", "try later");
    });
    await expect(down.lock.get()).rejects.toThrow("try later");
  });

  it("creates the Lease in its namespace with the record as spec", async () => {
    const { client, lock } = stubClient(async () => stored);
    await lock.create(record);
    expect(client.create).toHaveBeenCalledWith(
      Lease,
      { metadata: { name: "op-lock", namespace: "ops" }, spec: leaseSpecFromRecord(record) },
      {},
    );
  });

  it("updates with the given resourceVersion, keeping what the record does not carry", async () => {
    const { client, lock } = stubClient(async () => stored);
    await lock.get();
    const renewed = { ...record, holderIdentity: "me", renewTime: "2026-11-29T22:00:06.000000Z" };
    await lock.update(renewed, "41");
    expect(client.update).toHaveBeenLastCalledWith(
      Lease,
      {
        ...stored,
        metadata: { ...stored.metadata, resourceVersion: "41" },
        spec: { ...leaseSpecFromRecord(renewed), preferredHolder: "node-2" },
      },
      {},
    );

    // A version other than the one last read: nothing of the old object is reused but its name.
    await lock.update(renewed, "7");
    expect(client.update).toHaveBeenLastCalledWith(
      Lease,
      {
        metadata: { name: "op-lock", namespace: "ops", resourceVersion: "7" },
        spec: leaseSpecFromRecord(renewed),
      },
      {},
    );
  });
});
