// A backup or restore Job as the planners see it (done, or failed with its reason, and when), and what its pods
// say: the failed step's own last words (its termination message, FallbackToLogsOnError: the log's tail) and the
// results a succeeded pod left in its containers' termination messages. Pure: the reconcilers list the objects.
import type { JobObject, PodObject } from "@capstan/core";

/** Whether a Job ended, and how. */
export interface JobOutcome {
  /** Complete=True. */
  succeeded: boolean;
  /** When the Job started (its status.startTime). */
  startTime?: Date;
  completionTime?: Date;
  /** Failed=True: why (the condition's reason and message). */
  failed?: { reason: string; message: string };
}

/** The Job's outcome from its conditions. */
export function jobOutcome(job: JobObject): JobOutcome {
  const conditions = job.status?.conditions ?? [];
  const isTrue = (type: string) => conditions.find((c) => c.type === type && c.status === "True");
  const failed = isTrue("Failed");
  const complete = isTrue("Complete");
  const start = job.status?.startTime;
  const end = job.status?.completionTime ?? failed?.lastTransitionTime;
  return {
    succeeded: complete !== undefined,
    ...(start === undefined ? {} : { startTime: new Date(start) }),
    ...(end === undefined ? {} : { completionTime: new Date(end) }),
    ...(failed === undefined
      ? {}
      : { failed: { reason: failed.reason ?? "Failed", message: failed.message ?? "" } }),
  };
}

/** Longest part of a container's own error carried into status. */
export const POD_ERROR_MAX = 600;

/**
 * The failed step's own error: the first container of the newest failed pod that exited non-zero, as
 * "<container>: <its termination message>" (its last {@link POD_ERROR_MAX} characters when long); undefined when no
 * failed pod says anything.
 */
export function failedStepMessage(pods: readonly PodObject[]): string | undefined {
  const failed = pods
    .filter((p) => p.status?.phase === "Failed")
    .sort((a, b) => (b.metadata.creationTimestamp ?? "").localeCompare(a.metadata.creationTimestamp ?? ""));
  for (const pod of failed) {
    const statuses = [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])];
    const broken = statuses.find((c) => (c.state?.terminated?.exitCode ?? 0) !== 0);
    const said = broken?.state?.terminated?.message?.trim();
    if (broken === undefined || said === undefined || said === "") continue;
    const tail = said.length > POD_ERROR_MAX ? `...${said.slice(-POD_ERROR_MAX)}` : said;
    return `${broken.name}: ${tail}`;
  }
  return undefined;
}

/** The termination message of each container (init containers too) of the Job's succeeded pod, by name. */
export function succeededPodMessages(pods: readonly PodObject[]): Map<string, string> | undefined {
  const pod = pods.find((p) => p.status?.phase === "Succeeded");
  if (pod === undefined) return undefined;
  const out = new Map<string, string>();
  for (const c of [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])]) {
    const message = c.state?.terminated?.message;
    if (message !== undefined) out.set(c.name, message);
  }
  return out;
}
