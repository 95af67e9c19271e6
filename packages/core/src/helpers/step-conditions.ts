// The Progressing and Degraded conditions of a planned step: the same mapping for every operator whose planner
// returns one step at a time (wait, act, in sync, or refuse), so `kubectl wait --for=condition=...` reads alike.
import type { ConditionInput } from "./conditions.ts";

/**
 * A planner's next step as status sees it: `type` "InSync" (nothing to do), "Degraded" (refused; only a human or a
 * change outside can help), "Wait" (something is moving; reason "Paused" when the object is paused), or the name of
 * an action the operator takes ("AddLearner", "Unseal", ...).
 */
export interface PlannedStep {
  type: string;
  /** CamelCase reason: required for "Degraded" and "Wait" (it names what is awaited or refused). */
  reason?: string;
  /** What status and Events say. */
  message: string;
}

/** The two conditions {@link stepConditions} returns. */
export interface StepConditions {
  progressing: ConditionInput;
  degraded: ConditionInput;
}

/**
 * The `Progressing` and `Degraded` conditions for `step`, with `observedGeneration` set to `generation`:
 *
 * | step               | Progressing             | Degraded                 |
 * | ------------------ | ----------------------- | ------------------------ |
 * | InSync             | False, InSync           | False, AsExpected        |
 * | Degraded           | False, step.reason      | True, step.reason        |
 * | Wait, Paused       | False, Paused           | False, AsExpected        |
 * | Wait               | True, step.reason       | False, AsExpected        |
 * | an action          | True, step.type         | False, AsExpected        |
 *
 * Each carries the step's message, except Degraded False, whose message is empty. An operator with more to say
 * (an outage that outlasts the step, say) replaces the one it knows better before setting them.
 */
export function stepConditions(step: PlannedStep, generation: number): StepConditions {
  const condition = (
    type: string,
    status: ConditionInput["status"],
    reason: string,
    message: string,
  ): ConditionInput => ({ type, status, reason, message, observedGeneration: generation });
  const asExpected = condition("Degraded", "False", "AsExpected", "");
  const reason = step.reason ?? step.type;
  switch (step.type) {
    case "InSync":
      return { progressing: condition("Progressing", "False", "InSync", step.message), degraded: asExpected };
    case "Degraded":
      return {
        progressing: condition("Progressing", "False", reason, step.message),
        degraded: condition("Degraded", "True", reason, step.message),
      };
    case "Wait":
      return {
        progressing:
          reason === "Paused"
            ? condition("Progressing", "False", "Paused", step.message)
            : condition("Progressing", "True", reason, step.message),
        degraded: asExpected,
      };
    default:
      return { progressing: condition("Progressing", "True", step.type, step.message), degraded: asExpected };
  }
}
