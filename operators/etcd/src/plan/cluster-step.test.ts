// Table tests of the one step of an EtcdCluster reconcile: TLS and auth stop the membership planner before it is
// asked, automatic recovery turns a hopeless lost quorum into Degraded naming its field, the CA rotation runs only
// on a cluster in sync with its TLS in place.
import { describe, expect, it } from "vitest";
import type { AutomaticRecoveryDecision } from "./automatic-recovery.ts";
import {
  automaticRecoveryMayRun,
  type ClusterStepInput,
  caRotationMayRun,
  planClusterStep,
  type TLSVerdict,
} from "./cluster-step.ts";
import type { Step } from "./plan.ts";

const quorumLost: Step = { type: "QuorumLost", message: "1 of 3 voting members are healthy" };
const inSync: Step = { type: "InSync", message: "3 members" };
const none: AutomaticRecoveryDecision = { type: "None" };
const tlsMissing: TLSVerdict = {
  reason: "TLSSecretMissing",
  field: "spec.tls.secretRef",
  message: "Secret demo-tls not found",
};

type Case = [string, Omit<ClusterStepInput, "membership"> & { membership?: Step }, Partial<Step>];
const cases: Case[] = [
  ["nothing in the way: the membership planner's step", { membership: inSync, automatic: none }, inSync],
  [
    "TLS refused: Degraded naming the field, the membership planner never asked",
    { tls: tlsMissing, automatic: none },
    { type: "Degraded", reason: "TLSSecretMissing", field: "spec.tls.secretRef" },
  ],
  [
    "TLS still being issued (cert-manager): a Wait with its reason, not Degraded",
    { tls: { ...tlsMissing, reason: "CertificatesPending", waiting: true }, automatic: none },
    { type: "Wait", reason: "CertificatesPending" },
  ],
  [
    "TLS comes before auth",
    { tls: tlsMissing, auth: { reason: "RootSecretMissing", field: "x", message: "m" }, automatic: none },
    { type: "Degraded", reason: "TLSSecretMissing" },
  ],
  [
    "etcd authentication unusable: Degraded naming the field, the membership planner never asked",
    {
      auth: { reason: "RootSecretMissing", field: "spec.auth.rootSecretRef", message: "gone" },
      automatic: none,
    },
    { type: "Degraded", reason: "RootSecretMissing", field: "spec.auth.rootSecretRef" },
  ],
  [
    "quorum lost, automatic recovery has no survivor and no backup: Degraded AutomaticRecoveryNoBackup",
    { membership: quorumLost, automatic: { type: "NoBackup", message: "no backup" } },
    { type: "Degraded", reason: "AutomaticRecoveryNoBackup", field: "spec.recovery.automatic" },
  ],
  [
    "quorum lost after an automatic recovery failed: Degraded AutomaticRecoveryFailed",
    { membership: quorumLost, automatic: { type: "Blocked", name: "demo-auto-x", message: "failed" } },
    { type: "Degraded", reason: "AutomaticRecoveryFailed", field: "spec.recovery.automatic" },
  ],
  [
    "quorum lost, automatic recovery waiting (its clock, or Kubernetes' failover): QuorumLost as planned",
    { membership: quorumLost, automatic: { type: "Failover", pods: ["demo-b"], message: "failover" } },
    quorumLost,
  ],
  [
    "a NoBackup verdict on a cluster whose planner does not see a lost quorum changes nothing",
    { membership: inSync, automatic: { type: "NoBackup", message: "no backup" } },
    inSync,
  ],
];

describe("planClusterStep", () => {
  it.each(cases)("%s", (_name, input, want) => {
    let asked = false;
    const got = planClusterStep({
      ...input,
      membership: () => {
        asked = true;
        return input.membership ?? inSync;
      },
    });
    expect(got).toMatchObject(want);
    expect(asked).toBe(input.tls === undefined && input.auth === undefined);
  });

  it("automatic recovery judges only with the cluster's TLS in place", () => {
    expect(automaticRecoveryMayRun(undefined)).toBe(true);
    expect(automaticRecoveryMayRun(tlsMissing)).toBe(false);
  });

  it("the CA rotation runs only on a cluster in sync with its TLS in place", () => {
    expect(caRotationMayRun(inSync, undefined)).toBe(true);
    expect(caRotationMayRun(inSync, tlsMissing)).toBe(false);
    expect(caRotationMayRun(quorumLost, undefined)).toBe(false);
    expect(caRotationMayRun({ type: "Wait", reason: "Scaling", message: "" }, undefined)).toBe(false);
  });
});
