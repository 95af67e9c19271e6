// Table tests of the planner during a switch of the listener certificate's source (spec.tls.secretName set,
// changed or unset): the pods still mounting the old Secret are restarted onto spec's one at a time with the
// rolling-restart rules (standbys first, the active one last after a step-down, never while another voter is
// down), a pod whose certificate no trusted CA signs is reported and not restarted, and the switch ends InSync.
import { describe, expect, it } from "vitest";
import type { ObservedPod, Step } from "./plan.ts";
import { observed, plan, pod, type State } from "./plan-fixtures.ts";

const OLD_SECRET = "demo-tls";
const NEW_SECRET = "vault-cm";
const toCertManager = { tls: { secretName: NEW_SECRET, duration: "2160h", renewBefore: "720h" } };

/** A pod mounting `secret`; one mounting another than spec's was built from an older template (the hash has it). */
const on = (ordinal: number, state: State, secret: string, extra: Partial<ObservedPod> = {}) =>
  pod(ordinal, state, {
    tlsSecret: secret,
    ...(secret === NEW_SECRET ? {} : { templateOutdated: true }),
    ...extra,
  });

const message = (step: Step) => ("message" in step ? step.message : "");

describe("a switch of the listener certificate's source", () => {
  it("noticed: the lowest standby still serving the old Secret is restarted first, the message names both Secrets", () => {
    const pods = [on(0, "active", OLD_SECRET), on(1, "standby", OLD_SECRET), on(2, "standby", OLD_SECRET)];
    const step = plan(observed(pods, { namespace: "ns" }), toCertManager);
    expect(step).toMatchObject({ type: "DeletePod", pod: "demo-1", deleteClaim: false, reason: "Restart" });
    expect(message(step)).toContain(`onto the listener certificate of Secret ${NEW_SECRET}`);
    expect(message(step)).toContain(`it serves Secret ${OLD_SECRET}`);
    expect(message(step)).toContain(`0 of 3 pods serve Secret ${NEW_SECRET}`);
  });

  it("a pod rolled: it is unsealed first, nothing more is restarted until it is back, then the next standby", () => {
    const sealed = [on(0, "active", OLD_SECRET), on(1, "sealed", NEW_SECRET), on(2, "standby", OLD_SECRET)];
    expect(plan(observed(sealed), toCertManager)).toMatchObject({ type: "Unseal", pod: "demo-1" });
    const starting = [on(0, "active", OLD_SECRET), on(1, "down", NEW_SECRET), on(2, "standby", OLD_SECRET)];
    expect(plan(observed(starting), toCertManager)).toMatchObject({ type: "Wait", reason: "PodNotReady" });

    const pods = [on(0, "active", OLD_SECRET), on(1, "standby", NEW_SECRET), on(2, "standby", OLD_SECRET)];
    const step = plan(observed(pods), toCertManager);
    expect(step).toMatchObject({ type: "DeletePod", pod: "demo-2", reason: "Restart" });
    expect(message(step)).toContain(`1 of 3 pods serve Secret ${NEW_SECRET}`);
  });

  it("the active one last: stepped down while it serves the old Secret, restarted as a standby; then InSync", () => {
    const before = [on(0, "active", OLD_SECRET), on(1, "standby", NEW_SECRET), on(2, "standby", NEW_SECRET)];
    const down = plan(observed(before), toCertManager);
    expect(down).toMatchObject({ type: "StepDown", pod: "demo-0" });
    expect(message(down)).toContain(`still serves Secret ${OLD_SECRET}`);
    expect(message(down)).toContain(`2 of 3 pods serve Secret ${NEW_SECRET}`);

    const after = [on(0, "standby", OLD_SECRET), on(1, "active", NEW_SECRET), on(2, "standby", NEW_SECRET)];
    const restart = plan(observed(after), toCertManager);
    expect(restart).toMatchObject({ type: "DeletePod", pod: "demo-0", reason: "Restart" });
    expect(message(restart)).toContain(`2 of 3 pods serve Secret ${NEW_SECRET}`);

    // Done: every pod serves the new Secret.
    const done = [on(0, "standby", NEW_SECRET), on(1, "active", NEW_SECRET), on(2, "standby", NEW_SECRET)];
    expect(plan(observed(done), toCertManager)).toMatchObject({ type: "InSync" });
  });

  it("a pod that answers with a certificate no trusted CA signs is Degraded naming it, and not restarted", () => {
    // The kubelet's probes do not verify the certificate: the pod is Ready (unsealed) as far as it knows. (One the
    // kubelet reports not Ready is replaced by the heal rule: a broken pod never blocks its own fix.)
    const rejected = {
      ready: true,
      vault: {
        reachable: false as const,
        error: "unable to verify the first certificate",
        certificateRejected: true as const,
      },
    };
    const pods = [
      on(0, "active", OLD_SECRET),
      on(1, "standby", OLD_SECRET),
      on(2, "down", OLD_SECRET, rejected),
    ];
    const step = plan(observed(pods, { namespace: "ns" }), toCertManager);
    expect(step).toMatchObject({ type: "Degraded", reason: "CertificateUntrusted", pods: ["demo-2"] });
    expect(message(step)).toContain("demo-2 presents a certificate that no CA the operator trusts signs");
    expect(message(step)).toContain(`restore Secret ${OLD_SECRET}`);
    expect(message(step)).toContain("kubectl delete pod demo-2 -n ns");

    // Every pod refused and none active: reported the same way, not waited for as "no Vault pod answers yet".
    const all = [0, 1, 2].map((o) => on(o, "down", OLD_SECRET, rejected));
    const none = plan(observed(all, { raft: { error: "no active pod" } }), toCertManager);
    expect(none).toMatchObject({
      type: "Degraded",
      reason: "CertificateUntrusted",
      pods: ["demo-0", "demo-1", "demo-2"],
    });
    expect(message(none)).toContain("no CA the operator trusts signs");
  });

  it("back to the operator's certificate (secretName unset): the pods move to <name>-tls the same way", () => {
    const pods = [
      on(0, "active", NEW_SECRET, { templateOutdated: true }),
      on(1, "standby", NEW_SECRET, { templateOutdated: true }),
      on(2, "standby", OLD_SECRET),
    ];
    const step = plan(observed(pods));
    expect(step).toMatchObject({ type: "DeletePod", pod: "demo-1" });
    expect(message(step)).toContain(`onto the listener certificate of Secret ${OLD_SECRET}`);
    expect(message(step)).toContain(`1 of 3 pods serve Secret ${OLD_SECRET}`);
  });
});
