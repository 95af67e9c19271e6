// The Job removing a deleted backup's snapshot file (and a leftover .partial) from its claim with the operator image's
// `backup-delete`: the same for an EtcdBackup and a VaultSnapshot, with the operator's labels and the user that wrote
// the file. Not owned by the backup object: a foreground deletion of it would delete the Job before it ran. The
// reconciler deletes it once it succeeded; the TTL removes one left behind. Pure.
import { createHash } from "node:crypto";
import {
  type JobObject,
  restrictedContainerSecurityContext,
  restrictedPodSecurityContext,
} from "@capstan/core";
import { DESTINATION_MOUNT } from "./upload.ts";

/** The container of the removal Job. */
export const DELETE_CONTAINER = "delete";

/** The Job removing a PVC backup's file: `<name>-delete`, shortened with a hash for long names (63 at most). */
export function deleteJobNameOf(name: string): string {
  if (name.length <= 56) return `${name}-delete`;
  return `${name.slice(0, 45)}-${createHash("sha256").update(name).digest("hex").slice(0, 8)}-delete`;
}

/** What the removal Job is made of. */
export interface DeleteJobInput {
  /** The backup object's name and namespace. */
  name: string;
  namespace: string;
  /** Labels of the Job and its pod. */
  labels: Record<string, string>;
  operatorImage: string;
  claimName: string;
  /** The file, below {@link DESTINATION_MOUNT}. */
  file: string;
  /** The user that wrote the file (the backup Job's). */
  runAsUser: number;
  /** Attempts after the first. */
  backoffLimit: number;
}

/** The Job removing `file` from the claim (and a leftover .partial). */
export function snapshotDeleteJob(input: DeleteJobInput): JobObject {
  const { labels } = input;
  return {
    apiVersion: "batch/v1",
    kind: "Job",
    metadata: { name: deleteJobNameOf(input.name), namespace: input.namespace, labels },
    spec: {
      backoffLimit: input.backoffLimit,
      activeDeadlineSeconds: 300,
      ttlSecondsAfterFinished: 3600,
      template: {
        metadata: { labels },
        spec: {
          restartPolicy: "Never",
          enableServiceLinks: false,
          automountServiceAccountToken: false,
          securityContext: restrictedPodSecurityContext(input.runAsUser),
          containers: [
            {
              name: DELETE_CONTAINER,
              image: input.operatorImage,
              args: ["backup-delete", `--file=${input.file}`],
              resources: { requests: { cpu: "50m", memory: "64Mi" } },
              terminationMessagePolicy: "FallbackToLogsOnError",
              securityContext: restrictedContainerSecurityContext(),
              volumeMounts: [{ name: "destination", mountPath: DESTINATION_MOUNT }],
            },
          ],
          volumes: [{ name: "destination", persistentVolumeClaim: { claimName: input.claimName } }],
        },
      },
    },
  };
}
