// spec.recovery and spec.maintenance of an EtcdCluster: how long a stuck member may wait before it is replaced,
// opt-in automatic recovery after quorum loss, and disk upkeep (compaction, defragmentation); types and schemas.
import type { JSONSchemaProps } from "@capstan/core";

/** How long the operator waits before it replaces a member that cannot come back (seconds). */
export interface EtcdRecovery {
  /** A voting member whose pod stays not ready this long is replaced (default 300). */
  memberNotReadySeconds?: number;
  /** A member whose pod finds no node this long is replaced (default 300). */
  unschedulableSeconds?: number;
  /** A member whose pod stays terminating this long (e.g. on an unreachable node) is replaced (default 300). */
  terminatingSeconds?: number;
  /** A learner whose raft index does not advance this long is replaced (default 600). */
  learnerStallSeconds?: number;
  /** Opt-in recovery from the newest backup after quorum has been lost for a while (an EtcdRestore it creates). */
  automatic?: EtcdAutomaticRecovery;
}

/** spec.recovery.automatic. */
export interface EtcdAutomaticRecovery {
  /** Off unless true. */
  enabled?: boolean;
  /**
   * How long quorum must have been lost (measured from status.quorumLostSince) before recovering (default 900; never
   * less than the operator's floor, 900 s unless its admin lowered it).
   */
  afterSeconds?: number;
}

/** Disk upkeep: compaction and defragmentation. */
export interface EtcdMaintenance {
  /** --auto-compaction-mode (default periodic). */
  autoCompactionMode?: "periodic" | "revision";
  /** --auto-compaction-retention (default "1h" for periodic; a revision count for revision). */
  autoCompactionRetention?: string;
  /** A member whose free pages reach this share of its database file is defragmented (default 50). */
  defragThresholdPercent?: number;
}

const seconds = (description: string, dflt: number, minimum: number): JSONSchemaProps => ({
  type: "integer",
  format: "int32",
  description,
  default: dflt,
  minimum,
  maximum: 86_400,
});

/** The schema of spec.recovery. */
export const recoverySchema: JSONSchemaProps = {
  type: "object",
  description:
    "How long a member may stay stuck before it is replaced by a fresh one (only while quorum holds), and opt-in automatic recovery from a backup after quorum is lost (automatic).",
  default: {},
  properties: {
    memberNotReadySeconds: seconds(
      "A voting member whose pod stays not ready this long is replaced.",
      300,
      30,
    ),
    unschedulableSeconds: seconds("A member whose pod finds no node this long is replaced.", 300, 30),
    terminatingSeconds: seconds(
      "A member whose pod stays terminating this long (e.g. on an unreachable node) is replaced.",
      300,
      30,
    ),
    learnerStallSeconds: seconds(
      "A learner whose raft index does not advance this long is replaced (a learner is judged by progress, not age).",
      600,
      60,
    ),
    automatic: {
      type: "object",
      description:
        "Opt-in disaster recovery: when quorum has been lost for afterSeconds (measured from status.quorumLostSince, so an operator restart neither resets nor shortens it; the clock does not run while a member's pod is being deleted, so Kubernetes' node failover comes first), the operator creates ONE EtcdRestore: from: Survivor when a voting member still answers with this cluster's data at least as new as the newest backup, else from: Backup of this cluster's newest Succeeded EtcdBackup taken from its own data (by cluster ID; it loses the writes made since that backup); never another while one is running or after one failed. With neither: Degraded and an Event.",
      properties: {
        enabled: { type: "boolean", default: false, description: "Recover automatically; off by default." },
        afterSeconds: seconds(
          "How long quorum must have been lost before recovering. Never less than the operator's floor (--automatic-recovery-floor-seconds, 900 by default: eviction of a lost node's pods after 300 s, force-detach of its volumes 360 s later, and time to start again elsewhere).",
          900,
          300,
        ),
      },
    },
  },
};

/** The schema of spec.maintenance. */
export const maintenanceSchema: JSONSchemaProps = {
  type: "object",
  description: "Disk upkeep: etcd's automatic compaction and the operator's defragmentation.",
  default: {},
  properties: {
    autoCompactionMode: {
      type: "string",
      enum: ["periodic", "revision"],
      default: "periodic",
      description: "--auto-compaction-mode.",
    },
    autoCompactionRetention: {
      type: "string",
      default: "1h",
      maxLength: 32,
      description:
        "--auto-compaction-retention: a duration for periodic (e.g. 1h, 30m), a revision count for revision.",
      "x-kubernetes-validations": [
        {
          rule: "self.matches('^[0-9]+(h|m|s)?$')",
          message:
            "maintenance.autoCompactionRetention must be a number (revisions or hours) or a duration like 30m or 1h",
        },
      ],
    },
    defragThresholdPercent: {
      type: "integer",
      format: "int32",
      default: 50,
      minimum: 10,
      maximum: 90,
      description:
        "A member whose free pages reach this share of its database file (dbSize - dbSizeInUse) is defragmented, one member at a time, the leader last.",
    },
  },
};
