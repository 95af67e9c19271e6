// The schema parts a one-shot backup kind (EtcdBackup, VaultSnapshot) shares, worded for each operator: the
// observedGeneration, phase and conditions that open its status, the start and completion times that close it, and
// its printer columns. The status fields between them (what the snapshot is: member or raft position, size,
// checksum, location, the operand's version) are each operator's, in its own order. The phases are the BackupPhase
// a schedule reads (schedule-plan.ts).
import type { PrinterColumn } from "@capstan/core";
import { conditionsSchema } from "@capstan/core";
import * as Type from "typebox/type";

/** Every phase of one backup, in the order the CRD schemas list them. */
export const BACKUP_PHASES = ["Pending", "Running", "Succeeded", "Failed"] as const;

/** Where one backup is in its life (the phases of an EtcdBackup and a VaultSnapshot). */
export type BackupPhase = (typeof BACKUP_PHASES)[number];

/**
 * The fields that open a backup's status: observedGeneration, phase ("Where the `noun` is in its life.") and the
 * conditions, described by `conditions`.
 */
export function backupStatusHeadProperties(noun: string, conditions: string) {
  return {
    observedGeneration: Type.Optional(
      Type.Integer({
        format: "int64",
        description: "The metadata.generation this status was computed from.",
      }),
    ),
    phase: Type.Optional(
      Type.Enum([...BACKUP_PHASES], {
        type: "string",
        description: `Where the ${noun} is in its life.`,
      }),
    ),
    conditions: Type.Optional(conditionsSchema(conditions)),
  };
}

/** The fields that close a backup's status: startTime (the Job's creation) and completionTime, described by `completion`. */
export function backupStatusTimeProperties(completion: string) {
  return {
    startTime: Type.Optional(Type.String({ format: "date-time", description: "When the Job was created." })),
    completionTime: Type.Optional(Type.String({ format: "date-time", description: completion })),
  };
}

/**
 * The printer columns of a backup kind: Cluster, Phase, `position` (where in the operand's history the snapshot was
 * taken: etcd's revision, Vault's raft index), Size, Location (wide output only), Completed, Age.
 */
export function backupPrinterColumns(position: { name: string; jsonPath: string }): PrinterColumn[] {
  return [
    { name: "Cluster", type: "string", jsonPath: ".spec.clusterName" },
    { name: "Phase", type: "string", jsonPath: ".status.phase" },
    { name: position.name, type: "integer", jsonPath: position.jsonPath },
    { name: "Size", type: "integer", jsonPath: ".status.size" },
    { name: "Location", type: "string", jsonPath: ".status.location", priority: 1 },
    { name: "Completed", type: "date", jsonPath: ".status.completionTime" },
    { name: "Age", type: "date", jsonPath: ".metadata.creationTimestamp" },
  ];
}
