// Table tests of the auth rules inside planNext: the order of the steps that turn auth on (each re-checked, so a
// restart between them resumes), turning it off, the gate on refused credentials, and where auth sits among the rules.
import { describe, expect, it } from "vitest";
import type { EtcdClusterSpec } from "../api/etcd-cluster.ts";
import { missingRootSecret, type ObservedAuth } from "./auth.ts";
import { type Observed, type ObservedMember, planNext, type Step } from "./plan.ts";
import { member, spec } from "./test-builders.ts";

const NOW = new Date("2026-12-02T10:00:00Z");

const three = (o: Partial<ObservedMember> = {}) => [
  member("demo-a", { leader: true, ...o }),
  member("demo-b", o),
  member("demo-c", o),
];

const observed = (
  auth: ObservedAuth | undefined,
  members = three(),
  o: Partial<Observed> = {},
): Observed => ({
  etcd: { reachable: true, members },
  pods: members.map((m) => ({ name: m.name, ready: m.healthy })),
  volumes: members.map((m) => m.name),
  bootstrapped: true,
  ...(auth === undefined ? {} : { auth }),
  ...o,
});

const ON = { auth: { enabled: true } };
const OFF = { auth: { enabled: false } };
const failure = (reason: "NoCredentials" | "WrongPassword"): ObservedAuth => ({
  enabled: true,
  failure: { reason, message: "etcdserver: authentication failed, invalid user ID or password" },
});
const unreachable = {
  etcd: { reachable: false as const, error: "etcdserver: user name is empty" },
};

type Case = [string, EtcdClusterSpec, Observed, Partial<Step>];

const cases: Case[] = [
  [
    "wanted, off, no user root: add it first",
    spec(ON),
    observed({ enabled: false, rootUser: false, rootRole: false }),
    { type: "AddRootUser" },
  ],
  [
    "wanted, root exists without its role (a restart after AddRootUser): grant the role",
    spec(ON),
    observed({ enabled: false, rootUser: true, rootRole: false }),
    { type: "GrantRootRole" },
  ],
  [
    "wanted, root with role root (a restart after GrantRootRole): enable",
    spec(ON),
    observed({ enabled: false, rootUser: true, rootRole: true }),
    { type: "EnableAuth" },
  ],
  ["wanted and on: in sync", spec(ON), observed({ enabled: true }), { type: "InSync" }],
  [
    "wanted, off, etcd did not answer about root: wait, not in sync",
    spec(ON),
    observed({ enabled: false }),
    { type: "Wait", reason: "AuthUnknown" },
  ],
  [
    "wanted, etcd did not say whether auth is on: wait",
    spec(ON),
    observed({}),
    { type: "Wait", reason: "AuthUnknown" },
  ],
  ["enabled: false and on: disable", spec(OFF), observed({ enabled: true }), { type: "DisableAuth" }],
  ["enabled: false and off: in sync", spec(OFF), observed({ enabled: false }), { type: "InSync" }],
  ["spec.auth unset: auth is left as it is", spec(), observed(undefined), { type: "InSync" }],
  [
    "wrong password: Degraded naming spec.auth.rootSecretRef, not QuorumLost",
    spec(ON),
    observed(failure("WrongPassword"), three(), unreachable),
    { type: "Degraded", reason: "AuthFailed", field: "spec.auth.rootSecretRef" },
  ],
  [
    "restored from an auth-enabled backup without spec.auth: Degraded naming spec.auth.rootSecretRef",
    spec(),
    observed(failure("NoCredentials"), three(), unreachable),
    { type: "Degraded", reason: "AuthFailed", field: "spec.auth.rootSecretRef" },
  ],
  [
    "paused wins over refused credentials",
    spec({ ...ON, paused: true }),
    observed(failure("WrongPassword"), three(), unreachable),
    { type: "Wait", reason: "Paused" },
  ],
  [
    "wanted but a member is unhealthy: no auth change on a sick cluster",
    spec(ON),
    observed({ enabled: false, rootUser: true, rootRole: true }, [
      member("demo-a", { leader: true }),
      member("demo-b", { healthy: false }),
      member("demo-c"),
    ]),
    { type: "Wait" },
  ],
  [
    "wanted on a cluster still growing (the seed alone): auth first, then scale out",
    spec(ON),
    observed({ enabled: false, rootUser: false, rootRole: false }, [member("demo-a", { leader: true })]),
    { type: "AddRootUser" },
  ],
  [
    "on and growing: scale out with auth on",
    spec(ON),
    observed({ enabled: true }, [member("demo-a", { leader: true })]),
    { type: "AddLearner" },
  ],
];

describe("planNext with spec.auth", () => {
  it.each(cases)("%s", (_, s, o, expected) => {
    const step = planNext(s, o, NOW, { freshName: "demo-fresh" });
    expect(step).toMatchObject(expected);
    expect(step.message).not.toBe("");
  });

  it("a refused password's message says what to do and carries no secret", () => {
    const step = planNext(spec(ON), observed(failure("WrongPassword"), three(), unreachable), NOW, {
      freshName: "demo-fresh",
    });
    expect(step.message).toMatch(/spec\.auth\.rootSecretRef: etcd rejects the root password/);
    expect(step.message).toMatch(/restored from a backup/);
  });
});

describe("missingRootSecret (issue 27, item 5)", () => {
  const base = { enabled: true, named: false, secret: "ns/demo-root", field: "spec.auth.rootSecretRef" };

  it("the operator's own Secret, etcd's auth not on (or not known yet): a new password is made", () => {
    expect(missingRootSecret(base)).toEqual({ type: "Create" });
    expect(missingRootSecret({ ...base, etcdAuth: "Disabled" })).toEqual({ type: "Create" });
  });

  it("the operator's own Secret while etcd has auth on: never a new password, Degraded naming the Secret and the recovery", () => {
    const got = missingRootSecret({ ...base, etcdAuth: "Enabled" });
    expect(got).toMatchObject({
      type: "Degraded",
      reason: "RootSecretMissing",
      field: "spec.auth.rootSecretRef",
    });
    if (got?.type !== "Degraded") throw new Error("not Degraded");
    expect(got.message).toContain("Secret ns/demo-root");
    expect(got.message).toContain("restore the Secret");
    expect(got.message).toContain("etcdctl");
  });

  it("a named Secret is never made; auth not wanted: nothing", () => {
    expect(missingRootSecret({ ...base, named: true, field: "spec.auth.rootSecretRef.name" })).toMatchObject({
      type: "Degraded",
      reason: "RootSecretMissing",
    });
    expect(missingRootSecret({ ...base, enabled: false, etcdAuth: "Enabled" })).toBeUndefined();
  });
});
