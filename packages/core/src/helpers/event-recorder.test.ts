import { describe, expect, it } from "vitest";
import type { KubeObject } from "../api/object.ts";
import type { Client } from "../client/client.ts";
import { ApiError } from "../client/errors.ts";
import type { Logger } from "../util/logger.ts";
import {
  type EventObject,
  EventRecorder,
  EventSeriesCache,
  eventSeriesKey,
  microTime,
  truncateUtf8,
} from "./event-recorder.ts";

const MIN = 60_000;
const T0 = new Date("2026-11-29T22:00:00.123Z");
const at = (ms: number) => new Date(T0.getTime() + ms);

describe("EventSeriesCache", () => {
  const names = () => {
    let n = 0;
    return () => `ev${++n}`;
  };

  it("creates on the first occurrence and patches repeats with count 2, then 3", () => {
    const cache = new EventSeriesCache();
    const name = names();
    expect(cache.observe("k", T0, name)).toEqual({ op: "create", name: "ev1" });
    expect(cache.observe("k", at(MIN), name)).toEqual({ op: "patch", name: "ev1", count: 2, firstTime: T0 });
    expect(cache.observe("k", at(2 * MIN), name)).toEqual({
      op: "patch",
      name: "ev1",
      count: 3,
      firstTime: T0,
    });
  });

  it("starts a new event once the window has passed since the last occurrence", () => {
    const cache = new EventSeriesCache({ windowMs: 6 * MIN });
    const name = names();
    cache.observe("k", T0, name);
    expect(cache.observe("k", at(6 * MIN), name).op).toBe("patch"); // exactly at the window: still open
    expect(cache.observe("k", at(12 * MIN), name).op).toBe("patch"); // the window slides with each repeat
    expect(cache.observe("k", at(18 * MIN + 1), name)).toEqual({ op: "create", name: "ev2" });
  });

  it("keeps different keys apart", () => {
    const cache = new EventSeriesCache();
    const name = names();
    expect(cache.observe("a", T0, name).op).toBe("create");
    expect(cache.observe("b", T0, name)).toEqual({ op: "create", name: "ev2" });
    expect(cache.observe("a", T0, name)).toMatchObject({ op: "patch", name: "ev1", count: 2 });
  });

  it("evicts the least recently seen key beyond maxKeys", () => {
    const cache = new EventSeriesCache({ maxKeys: 2 });
    const name = names();
    cache.observe("a", T0, name);
    cache.observe("b", T0, name);
    cache.observe("a", at(1), name); // a is now the most recent
    cache.observe("c", at(2), name); // evicts b
    expect(cache.size).toBe(2);
    expect(cache.observe("a", at(3), name).op).toBe("patch");
    expect(cache.observe("c", at(4), name).op).toBe("patch");
    expect(cache.observe("b", at(5), name)).toEqual({ op: "create", name: "ev4" });
  });

  it("drops expired entries so the cache does not hold stale keys", () => {
    const cache = new EventSeriesCache({ windowMs: MIN });
    const name = names();
    for (const k of ["a", "b", "c"]) cache.observe(k, T0, name);
    cache.observe("d", at(2 * MIN), name);
    expect(cache.size).toBe(1);
  });
});

describe("event helpers", () => {
  it("formats MicroTime with microseconds", () => {
    expect(microTime(T0)).toBe("2026-11-29T22:00:00.123000Z");
  });

  it("truncates to a byte budget without splitting characters", () => {
    expect(truncateUtf8("x".repeat(2000), 1024)).toHaveLength(1024);
    expect(truncateUtf8("short", 1024)).toBe("short");
    expect(truncateUtf8("aé€", 5)).toBe("aé"); // 1 + 2 bytes; the 3-byte € does not fit
  });

  it("the series key depends on the note, type, reason, action, objects and controller", () => {
    const base = {
      regarding: { kind: "Pod", name: "p", namespace: "ns", uid: "u1" },
      type: "Normal",
      reason: "Started",
      action: "Start",
      note: "hello",
      reportingController: "capstan.dev/x",
    };
    const key = eventSeriesKey(base);
    expect(eventSeriesKey({ ...base })).toBe(key);
    for (const change of [
      { note: "other" },
      { type: "Warning" },
      { reason: "Stopped" },
      { action: "Stop" },
      { reportingController: "capstan.dev/y" },
      { regarding: { ...base.regarding, uid: "u2" } },
      { related: { kind: "Pod", name: "q", namespace: "ns", uid: "u3" } },
    ]) {
      expect(eventSeriesKey({ ...base, ...change }), JSON.stringify(change)).not.toBe(key);
    }
  });
});

interface Call {
  verb: "create" | "patch";
  name: string | undefined;
  namespace: string | undefined;
  body: unknown;
  type?: string;
}

/** A Client double implementing only create and patch; `fail` scripts an error for a call. */
function recordingClient(fail: (call: Call) => Error | Promise<void> | undefined = () => undefined) {
  const calls: Call[] = [];
  const run = async (call: Call) => {
    calls.push(call);
    const f = fail(call);
    if (f instanceof Error) throw f;
    await f;
    return call.body;
  };
  const client = {
    create: (_kind: unknown, obj: EventObject) =>
      run({ verb: "create", name: obj.metadata.name, namespace: obj.metadata.namespace, body: obj }),
    patch: (_kind: unknown, name: string, namespace: string | undefined, body: unknown, type: string) =>
      run({ verb: "patch", name, namespace, body, type }),
  };
  return { client: client as unknown as Client, calls };
}

function recordingLogger() {
  const lines: { level: string; msg: string; obj: unknown }[] = [];
  const log = (level: string) => (obj: unknown, msg: string) => lines.push({ level, msg, obj });
  return { logger: { warn: log("warn"), error: log("error") } as unknown as Logger, lines };
}

const pod: KubeObject = {
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name: "etcd-0", namespace: "db", uid: "uid-pod", resourceVersion: "7" },
};

function recorder(client: Client, clock: { now: Date }, logger?: Logger) {
  return new EventRecorder({
    client,
    reportingController: "capstan.dev/etcd-operator",
    reportingInstance: "etcd-operator-abc",
    now: () => clock.now,
    ...(logger === undefined ? {} : { logger }),
  });
}

describe("EventRecorder", () => {
  it("creates the event, then patches its series on repeats", async () => {
    const { client, calls } = recordingClient();
    const clock = { now: T0 };
    const rec = recorder(client, clock);
    rec.event(pod, "Warning", "MemberUnhealthy", "HealthCheck", "member etcd-0 is not responding");
    expect(calls).toEqual([]); // never waits for the API server
    clock.now = at(MIN);
    rec.event(pod, "Warning", "MemberUnhealthy", "HealthCheck", "member etcd-0 is not responding");
    clock.now = at(2 * MIN);
    rec.event(pod, "Warning", "MemberUnhealthy", "HealthCheck", "member etcd-0 is not responding");
    await rec.flush();

    expect(calls.map((c) => c.verb)).toEqual(["create", "patch", "patch"]);
    const created = calls[0]?.body as EventObject;
    expect(created.metadata.name).toMatch(/^etcd-0\.[0-9a-f]{16}$/);
    expect(created).toEqual({
      apiVersion: "events.k8s.io/v1",
      kind: "Event",
      metadata: { name: created.metadata.name, namespace: "db" },
      eventTime: "2026-11-29T22:00:00.123000Z",
      type: "Warning",
      reason: "MemberUnhealthy",
      action: "HealthCheck",
      note: "member etcd-0 is not responding",
      regarding: {
        apiVersion: "v1",
        kind: "Pod",
        name: "etcd-0",
        namespace: "db",
        uid: "uid-pod",
        resourceVersion: "7",
      },
      reportingController: "capstan.dev/etcd-operator",
      reportingInstance: "etcd-operator-abc",
    });
    expect(calls[1]).toEqual({
      verb: "patch",
      name: created.metadata.name,
      namespace: "db",
      type: "merge",
      body: { series: { count: 2, lastObservedTime: "2026-11-29T22:01:00.123000Z" } },
    });
    expect(calls[2]?.body).toEqual({ series: { count: 3, lastObservedTime: "2026-11-29T22:02:00.123000Z" } });
  });

  it("creates a new event for a different note, and after the window", async () => {
    const { client, calls } = recordingClient();
    const clock = { now: T0 };
    const rec = recorder(client, clock);
    rec.event(pod, "Normal", "Scaled", "Scale", "3 -> 4");
    rec.event(pod, "Normal", "Scaled", "Scale", "4 -> 5");
    clock.now = at(7 * MIN);
    rec.event(pod, "Normal", "Scaled", "Scale", "3 -> 4");
    await rec.flush();
    expect(calls.map((c) => c.verb)).toEqual(["create", "create", "create"]);
    expect(new Set(calls.map((c) => c.name)).size).toBe(3);
  });

  it("puts events about cluster-scoped objects in the default namespace, with the related object", async () => {
    const { client, calls } = recordingClient();
    const rec = recorder(client, { now: T0 });
    const node: KubeObject = { apiVersion: "v1", kind: "Node", metadata: { name: "n1", uid: "uid-n1" } };
    rec.event(node, "Normal", "Drained", "Drain", "x".repeat(5000), pod);
    await rec.flush();
    const body = calls[0]?.body as EventObject;
    expect(body.metadata.namespace).toBe("default");
    expect(body.regarding).toEqual({ apiVersion: "v1", kind: "Node", name: "n1", uid: "uid-n1" });
    expect(body.related).toMatchObject({ kind: "Pod", name: "etcd-0", namespace: "db" });
    expect(body.note).toHaveLength(1024);
  });

  it("sends the patch only after the create of the same series finished", async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    const { client, calls } = recordingClient((c) => (c.verb === "create" ? gate : undefined));
    const rec = recorder(client, { now: T0 });
    rec.event(pod, "Normal", "Scaled", "Scale", "n");
    rec.event(pod, "Normal", "Scaled", "Scale", "n");
    await new Promise((r) => setImmediate(r));
    expect(calls.map((c) => c.verb)).toEqual(["create"]);
    release();
    await rec.flush();
    expect(calls.map((c) => c.verb)).toEqual(["create", "patch"]);
  });

  it("re-creates the event with its series when the patch finds it gone", async () => {
    const { client, calls } = recordingClient((c) =>
      c.verb === "patch" ? new ApiError(404, "NotFound", "events not found") : undefined,
    );
    const clock = { now: T0 };
    const rec = recorder(client, clock);
    rec.event(pod, "Normal", "Scaled", "Scale", "n");
    clock.now = at(MIN);
    rec.event(pod, "Normal", "Scaled", "Scale", "n");
    await rec.flush();
    expect(calls.map((c) => c.verb)).toEqual(["create", "patch", "create"]);
    expect(calls[2]?.name).toBe(calls[0]?.name);
    expect(calls[2]?.body).toMatchObject({
      eventTime: "2026-11-29T22:00:00.123000Z",
      series: { count: 2, lastObservedTime: "2026-11-29T22:01:00.123000Z" },
    });
  });

  it("logs failures instead of throwing", async () => {
    const { client } = recordingClient(() => new ApiError(403, "Forbidden", "events is forbidden"));
    const { logger, lines } = recordingLogger();
    const clock = { now: T0 };
    const rec = recorder(client, clock, logger);
    expect(() => rec.event(pod, "Normal", "Scaled", "Scale", "n")).not.toThrow();
    await rec.flush();
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: "warn", msg: "failed to record event" });

    const broken = new EventRecorder({
      client,
      reportingController: "c",
      reportingInstance: "i",
      logger,
      now: () => {
        throw new Error("clock broke");
      },
    });
    expect(() => broken.event(pod, "Normal", "Scaled", "Scale", "n")).not.toThrow();
    expect(lines[1]).toMatchObject({ level: "error", msg: "failed to record event" });
  });
});
