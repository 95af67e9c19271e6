// What to do next for one __Kind__, as a pure function of what was observed: table-tested in plan.test.ts. The
// reconciler observes, asks planNext, performs the one step, and reports it in status.
import { type ConfigMapObject, needsApply } from "@capstan/core";

/** What the reconciler saw. */
export interface Observed {
  paused: boolean;
  desired: ConfigMapObject;
  live: ConfigMapObject | undefined;
  /** A ConfigMap of that name exists but another owner (or nobody) controls it. */
  foreign: boolean;
}

/** The next step, with the reason and message status and Events carry. */
export type Step =
  | { type: "Paused"; message: string }
  | { type: "ApplyConfigMap"; reason: "ConfigMapMissing" | "ConfigMapDrifted"; message: string }
  | { type: "Degraded"; reason: "ConfigMapNotOwned"; message: string }
  | { type: "InSync"; message: string };

/** The one next step for what was observed. */
export function planNext(o: Observed): Step {
  const name = o.desired.metadata.name ?? "";
  if (o.paused) return { type: "Paused", message: "spec.paused is true: nothing is changed" };
  if (o.foreign) {
    // Never take over (or delete) an object someone else made: say so and let a human decide.
    return {
      type: "Degraded",
      reason: "ConfigMapNotOwned",
      message: `ConfigMap ${name} exists and is not this __Kind__'s: rename or delete it`,
    };
  }
  if (o.live === undefined) {
    return { type: "ApplyConfigMap", reason: "ConfigMapMissing", message: `creating ConfigMap ${name}` };
  }
  if (needsApply(o.desired, o.live)) {
    return { type: "ApplyConfigMap", reason: "ConfigMapDrifted", message: `updating ConfigMap ${name}` };
  }
  return { type: "InSync", message: `ConfigMap ${name} holds spec.data` };
}
