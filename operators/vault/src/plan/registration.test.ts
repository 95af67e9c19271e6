// The planner's view of Vault's Kubernetes service registration: a pod built with it that Vault has not labelled a
// minute after it became Ready is reported (the -active Service, which selects Vault's label, cannot follow it), and
// it never holds back another step.
import { describe, expect, it } from "vitest";
import { ago, healthy3, NOW, OLD, observed, plan, pod } from "./plan-fixtures.ts";

const labelled = { registers: true, registered: true, readySince: ago(600) };

describe("Vault's service registration (rule 15)", () => {
  it("every pod labelled by Vault: in sync", () => {
    const pods = healthy3().map((p) => ({ ...p, ...labelled }));
    expect(plan(observed(pods)).type).toBe("InSync");
  });

  it("a pod Ready for a minute that Vault never labelled: Degraded naming it, and the causes to check", () => {
    const pods = [
      pod(0, "active", { registers: true, readySince: ago(120) }),
      pod(1, "standby", labelled),
      pod(2, "standby", labelled),
    ];
    const step = plan(observed(pods));
    expect(step).toMatchObject({ type: "Degraded", reason: "ServiceRegistrationFailed", pods: ["demo-0"] });
    if (step.type !== "Degraded") throw new Error("unreachable");
    expect(step.message).toMatch(/NetworkPolicy/);
    expect(step.message).toMatch(/ServiceAccount demo is bound to Role demo/);
  });

  it("not within the first minute of readiness (Vault labels it within seconds; the cache may lag)", () => {
    const pods = [
      pod(0, "active", { registers: true, readySince: ago(20) }),
      pod(1, "standby", labelled),
      pod(2, "standby", labelled),
    ];
    expect(plan(observed(pods)).type).toBe("InSync");
  });

  it("pods of an older operator (built without registration) are not reported: they are rolled onto it", () => {
    const pods = healthy3().map((p) => ({ ...p, readySince: ago(600), templateOutdated: true }));
    expect(plan(observed(pods))).toMatchObject({ type: "DeletePod", pod: "demo-1", reason: "Restart" });
  });

  it("never holds back an upgrade, which comes first", () => {
    const pods = [
      pod(0, "active", { registers: true, readySince: ago(600) }),
      pod(1, "standby", { ...labelled, image: OLD }),
      pod(2, "standby", labelled),
    ];
    expect(plan(observed(pods))).toMatchObject({ type: "UpgradePod", pod: "demo-1" });
  });

  it("a pod being deleted is not reported", () => {
    const pods = [
      pod(0, "active", labelled),
      pod(1, "standby", labelled),
      pod(2, "standby", { registers: true, readySince: ago(600), terminatingSince: NOW }),
    ];
    expect(plan(observed(pods)).type).not.toBe("Degraded");
  });
});
