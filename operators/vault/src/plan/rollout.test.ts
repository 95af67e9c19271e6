// planNext's rollout rules (12 and 13, rollout.ts): nothing moves while a pod is sick; upgrades and pod-template
// restarts one pod at a time, standbys first (lowest ordinal), the active node last after a step-down.
import { describe, expect, it } from "vitest";
import { planNext } from "./plan.ts";
import { ago, IMAGE, NOW, OLD, type Over, observed, peers, pod, spec } from "./plan-fixtures.ts";
import type { Observed, Step } from "./types.ts";

describe("rolling upgrade", () => {
  const upgrading = (images: string[], activeAt: number, o: Over = {}) =>
    observed(
      images.map((image, i) => pod(i, i === activeAt ? "active" : "standby", { image })),
      o,
    );

  it.each<[string, Observed, Partial<Step>]>([
    [
      "standbys first, lowest ordinal",
      upgrading([OLD, OLD, OLD], 0),
      { type: "UpgradePod", pod: "demo-1", from: OLD, to: IMAGE },
    ],
    ["then the next standby", upgrading([OLD, IMAGE, OLD], 0), { type: "UpgradePod", pod: "demo-2" }],
    ["then the active steps down", upgrading([OLD, IMAGE, IMAGE], 0), { type: "StepDown", pod: "demo-0" }],
    [
      "the old active is upgraded last, as a standby",
      upgrading([OLD, IMAGE, IMAGE], 1),
      { type: "UpgradePod", pod: "demo-0" },
    ],
    [
      "one pod at a time: the upgraded one must be back unsealed first",
      observed([pod(0, "active", { image: OLD }), pod(1, "sealed"), pod(2, "standby", { image: OLD })]),
      { type: "Unseal", pod: "demo-1" },
    ],
    [
      "one pod at a time: and a voter again",
      observed([pod(0, "active", { image: OLD }), pod(1, "standby"), pod(2, "standby", { image: OLD })], {
        raft: {
          servers: ["demo-0", "demo-1", "demo-2"].map((n, i) => ({
            nodeID: n,
            address: n,
            voter: i !== 1,
            leader: i === 0,
          })),
        },
      }),
      { type: "Wait", reason: "PodNotReady" },
    ],
    [
      "an image changed in place but the old container still runs (and is ready): wait, no next step",
      observed([
        pod(0, "active", { image: OLD }),
        pod(1, "standby", { image: IMAGE, runningImage: `docker.io/${OLD}` }),
        pod(2, "standby", { image: OLD }),
      ]),
      { type: "Wait", reason: "PodNotReady" },
    ],
    [
      "the last standby changed in place, its container not yet restarted: no step-down yet",
      observed([
        pod(0, "active", { image: OLD }),
        pod(1, "standby", { image: IMAGE, runningImage: `docker.io/${IMAGE}` }),
        pod(2, "standby", { image: IMAGE, runningImage: OLD }),
      ]),
      { type: "Wait", reason: "PodNotReady" },
    ],
    [
      "the runtime reports the image fully qualified: it counts as running spec's image",
      observed([
        pod(0, "active", { image: OLD }),
        pod(1, "standby", { image: IMAGE, runningImage: `docker.io/${IMAGE}` }),
        pod(2, "standby", { image: IMAGE, runningImage: `docker.io/${IMAGE}` }),
      ]),
      { type: "StepDown", pod: "demo-0" },
    ],
    [
      "a single pod is upgraded in place (no standby to hand over to)",
      observed([pod(0, "active", { image: OLD })]),
      { type: "UpgradePod", pod: "demo-0" },
    ],
    [
      // Seen end to end (e2e/suites/vault/broken-pods.test.ts): the reconcile right after restarting demo-1 saw it
      // terminating, out of the live pods, and restarted demo-2 too: one voter of three left, no quorum.
      "a changed pod template: the restarted standby still terminating holds back the next one",
      observed(
        [
          pod(0, "active"),
          pod(1, "standby", { templateOutdated: true, terminatingSince: ago(0) }),
          pod(2, "standby", { templateOutdated: true }),
        ],
        { raft: peers(["demo-0", "demo-1", "demo-2"], "demo-0") },
      ),
      { type: "Wait", reason: "PodNotReady" },
    ],
    [
      "an upgrade: the upgraded standby still terminating holds back the next one",
      observed(
        [
          pod(0, "active", { image: OLD }),
          pod(1, "standby", { image: OLD, terminatingSince: ago(1) }),
          pod(2, "standby", { image: OLD }),
        ],
        { raft: peers(["demo-0", "demo-1", "demo-2"], "demo-0") },
      ),
      { type: "Wait", reason: "PodNotReady" },
    ],
    [
      "a raft voter with no pod at all (deleted between two observations) holds back the rollout",
      observed([pod(0, "active"), pod(2, "standby", { templateOutdated: true })], {
        raft: peers(["demo-0", "demo-1", "demo-2"], "demo-0"),
        claims: ["data-demo-0", "data-demo-2"],
      }),
      { type: "Wait", reason: "PodNotReady" },
    ],
    [
      "a changed pod template restarts standbys on their data, the claim kept",
      observed([pod(0, "active"), pod(1, "standby", { templateOutdated: true }), pod(2, "standby")]),
      { type: "DeletePod", pod: "demo-1", deleteClaim: false, reason: "Restart" },
    ],
  ])("%s", (_name, o, want) =>
    expect(planNext("demo", spec(_name.includes("single") ? { replicas: 1 } : {}), o, NOW)).toMatchObject(
      want,
    ),
  );
});
