// spec.recovery and spec.maintenance of an EtcdCluster: how long a stuck member may wait before it is replaced,
// opt-in automatic recovery after quorum loss, and disk upkeep (compaction, defragmentation); types and schemas.
import * as Type from "typebox/type";

const seconds = (description: string, dflt: number, minimum: number) =>
  Type.Integer({ format: "int32", description, default: dflt, minimum, maximum: 86_400 });

const automaticRecoverySchema = Type.Object(
  {
    enabled: Type.Optional(
      Type.Boolean({ default: false, description: "Recover automatically; off by default." }),
    ),
    afterSeconds: Type.Optional(
      seconds(
        "How long quorum must have been lost before recovering. Never less than the operator's floor (--automatic-recovery-floor-seconds, 900 by default: eviction of a lost node's pods after 300 s, force-detach of its volumes 360 s later, and time to start again elsewhere).",
        900,
        300,
      ),
    ),
  },
  {
    description:
      "Opt-in disaster recovery: when quorum has been lost for afterSeconds (measured from status.quorumLostSince, so an operator restart neither resets nor shortens it; the clock does not run while a member's pod is being deleted, so Kubernetes' node failover comes first), the operator creates ONE EtcdRestore: from: Survivor when a voting member still answers with this cluster's data at least as new as the newest backup, else from: Backup of this cluster's newest Succeeded EtcdBackup taken from its own data (by cluster ID; it loses the writes made since that backup); never another while one is running or after one failed. With neither: Degraded and an Event.",
  },
);

/** spec.recovery.automatic: off unless enabled; afterSeconds defaults to 900 (never below the operator's floor). */
export type EtcdAutomaticRecovery = Type.Static<typeof automaticRecoverySchema>;

/** The schema of spec.recovery. */
export const recoverySchema = Type.Object(
  {
    memberNotReadySeconds: Type.Optional(
      seconds("A voting member whose pod stays not ready this long is replaced.", 300, 30),
    ),
    unschedulableSeconds: Type.Optional(
      seconds("A member whose pod finds no node this long is replaced.", 300, 30),
    ),
    terminatingSeconds: Type.Optional(
      seconds(
        "A member whose pod stays terminating this long (e.g. on an unreachable node) is replaced.",
        300,
        30,
      ),
    ),
    learnerStallSeconds: Type.Optional(
      seconds(
        "A learner whose raft index does not advance this long is replaced (a learner is judged by progress, not age).",
        600,
        60,
      ),
    ),
    automatic: Type.Optional(automaticRecoverySchema),
  },
  {
    description:
      "How long a member may stay stuck before it is replaced by a fresh one (only while quorum holds), and opt-in automatic recovery from a backup after quorum is lost (automatic).",
    default: {},
  },
);

/**
 * How long the operator waits before it replaces a member that cannot come back (seconds: memberNotReady,
 * unschedulable and terminating default to 300, learnerStall to 600), and opt-in automatic recovery.
 */
export type EtcdRecovery = Type.Static<typeof recoverySchema>;

/** The schema of spec.maintenance. */
export const maintenanceSchema = Type.Object(
  {
    autoCompactionMode: Type.Optional(
      Type.Enum(["periodic", "revision"], {
        type: "string",
        default: "periodic",
        description: "--auto-compaction-mode.",
      }),
    ),
    autoCompactionRetention: Type.Optional(
      Type.String({
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
      }),
    ),
    defragThresholdPercent: Type.Optional(
      Type.Integer({
        format: "int32",
        default: 50,
        minimum: 10,
        maximum: 90,
        description:
          "A member whose free pages reach this share of its database file (dbSize - dbSizeInUse) is defragmented, one member at a time, the leader last.",
      }),
    ),
  },
  {
    description: "Disk upkeep: etcd's automatic compaction and the operator's defragmentation.",
    default: {},
  },
);

/** Disk upkeep: compaction and defragmentation. */
export type EtcdMaintenance = Type.Static<typeof maintenanceSchema>;
