// The I/O of spec.recovery.automatic: reads this cluster's EtcdRestores and EtcdBackups and its member pods being
// deleted, asks plan/automatic-recovery.ts, and once a recovery is due asks each member's etcd alone for its
// status (the survivor with the newest data is preferred over a backup), creates the one EtcdRestore it decides on
// (labelled as the operator's own, named from the recorded start of the loss so a restart cannot make a second), and
// tells the controller what status.quorumLostSince must say and whether to report Degraded.
import { createHash } from "node:crypto";
import { isAlreadyExists, type ReconcileContext } from "@capstan/core";
import { EtcdBackupKind } from "../../api/backup.ts";
import type { EtcdCluster } from "../../api/etcd-cluster.ts";
import { AUTOMATIC_RESTORE_LABEL, type EtcdRestore, EtcdRestoreKind } from "../../api/etcd-restore.ts";
import { clusterRef } from "../../desired/names.ts";
import type { EtcdClientTLS } from "../../etcd/etcd-client.ts";
import {
  type AutomaticRecoveryDecision,
  type AutomaticRecoveryObserved,
  DEFAULT_AUTOMATIC_AFTER_SECONDS,
  planAutomaticRecovery,
} from "../../plan/automatic-recovery.ts";
import { judgeQuorum } from "../../plan/quorum-evidence.ts";
import type { EtcdClientFactory, Observation } from "../cluster/observe.ts";
import { observeRecoveryMembers } from "./recovery.ts";

/** The EtcdRestore for a loss of quorum that began at `since`: `<cluster>-auto-<5 characters>`. */
export function automaticRestoreName(cluster: EtcdCluster, since: Date): string {
  const digest = createHash("sha256")
    .update(`${cluster.metadata.uid ?? ""}/${since.toISOString()}`)
    .digest();
  const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789";
  const suffix = Array.from(digest.subarray(0, 5), (b) => alphabet[b % alphabet.length]).join("");
  return `${clusterRef(cluster).name}-auto-${suffix}`;
}

/**
 * The EtcdRestore spec.recovery.automatic creates, labelled as the operator's own: from: Survivor (the recovery
 * planner chooses the voter with the newest data again, by the same rule), or from: Backup of `backup`.
 */
export function automaticRestore(
  cluster: EtcdCluster,
  name: string,
  source: { from: "Survivor" } | { from: "Backup"; backup: string },
): EtcdRestore {
  const { namespace, name: clusterName } = clusterRef(cluster);
  return {
    apiVersion: EtcdRestoreKind.apiVersion,
    kind: EtcdRestoreKind.kind,
    metadata: { name, namespace, labels: { [AUTOMATIC_RESTORE_LABEL]: clusterName } },
    spec:
      source.from === "Survivor"
        ? { clusterName, from: "Survivor" }
        : { clusterName, from: "Backup", source: { backup: { name: source.backup } } },
  };
}

/** How the controller lets automatic recovery ask the members alone, and the operator's floor under afterSeconds. */
export interface AutomaticRecoveryOptions {
  /** Asks one member's etcd (with the operator's credentials): its status answers without a quorum. */
  etcdClient?: EtcdClientFactory;
  tls?: EtcdClientTLS;
  /** --automatic-recovery-floor-seconds (default 900). */
  floorSeconds?: number;
}

/** Decides (and, for CreateRestore, creates the EtcdRestore and records an Event). */
export async function reconcileAutomaticRecovery(
  ctx: ReconcileContext,
  cluster: EtcdCluster,
  obs: Observation,
  now: Date,
  options: AutomaticRecoveryOptions = {},
): Promise<AutomaticRecoveryDecision> {
  const { namespace, name } = clusterRef(cluster);
  const automatic = cluster.spec.recovery?.automatic;
  // The loss is judged from independent evidence (the kubelet's readiness of the members, the kind of the
  // operator's failure), never from the operator's calls alone.
  const judged = judgeQuorum(obs.observed);
  const quorum = judged.state === "Healthy";
  const unconfirmed = judged.state === "Unconfirmed" ? judged : undefined;
  const bootstrapped = cluster.status?.clusterID !== undefined;
  if (quorum || !bootstrapped || unconfirmed !== undefined) return { type: "None" };
  const recorded = cluster.status?.quorumLostSince;
  const lostSince = recorded === undefined ? undefined : new Date(recorded);
  const restores = (await ctx.cache.list(EtcdRestoreKind, { namespace }))
    .filter((r) => r.spec.clusterName === name)
    .map((r) => ({
      name: r.metadata.name ?? "",
      ...(r.status?.phase === undefined ? {} : { phase: r.status.phase }),
      automatic: r.metadata.labels?.[AUTOMATIC_RESTORE_LABEL] === name,
    }));
  const allBackups = await ctx.cache.list(EtcdBackupKind, { namespace });
  const backups = allBackups
    .filter((b) => b.spec.clusterName === name)
    .map((b) => ({
      name: b.metadata.name ?? "",
      ...(b.status?.phase === undefined ? {} : { phase: b.status.phase }),
      ...(b.status?.completionTime === undefined
        ? {}
        : { completionTime: new Date(b.status.completionTime) }),
      ...(b.status?.clusterID === undefined ? {} : { clusterID: b.status.clusterID }),
      ...(b.status?.revision === undefined ? {} : { revision: b.status.revision }),
    }));
  // The cluster's own ID, and after a restore from a backup (a new cluster ID) the ID that backup was taken from.
  const restoredFrom = /^backup\/(.+)$/.exec(cluster.status?.restore?.source ?? "")?.[1];
  const clusterIDs = [
    cluster.status?.clusterID,
    allBackups.find((b) => b.metadata.name === restoredFrom)?.status?.clusterID,
  ].filter((id): id is string => id !== undefined && id !== "");
  const observed: AutomaticRecoveryObserved = {
    enabled: automatic?.enabled === true,
    afterSeconds: automatic?.afterSeconds ?? DEFAULT_AUTOMATIC_AFTER_SECONDS,
    ...(options.floorSeconds === undefined ? {} : { floorSeconds: options.floorSeconds }),
    terminating: obs.observed.terminating ?? [],
    paused: cluster.spec.paused === true,
    bootstrapped,
    quorum,
    ...(lostSince === undefined || Number.isNaN(lostSince.getTime()) ? {} : { lostSince }),
    now,
    restores,
    backups,
    clusterIDs,
    nameFor: (since) => automaticRestoreName(cluster, since),
  };
  let decision = planAutomaticRecovery(observed);
  if (
    (decision.type === "CreateRestore" || decision.type === "NoBackup") &&
    options.etcdClient !== undefined
  ) {
    // Due: only now are the members asked alone (a status call each), and the decision made again with their answers.
    const members = await observeRecoveryMembers(
      cluster,
      "",
      ctx.cache,
      obs,
      options.etcdClient,
      ctx.signal,
      options.tls,
    );
    decision = planAutomaticRecovery({ ...observed, survivors: members });
  }
  if (decision.type === "CreateRestore") {
    const source =
      decision.from === "Survivor"
        ? { from: "Survivor" as const }
        : { from: "Backup" as const, backup: decision.backup };
    await ctx.client
      .create(EtcdRestoreKind, automaticRestore(cluster, decision.name, source), {
        signal: ctx.signal,
      })
      .catch((err: unknown) => {
        if (!isAlreadyExists(err)) throw err;
      });
    ctx.log.warn(
      {
        restore: decision.name,
        ...(decision.from === "Survivor" ? { survivor: decision.survivor } : { backup: decision.backup }),
      },
      decision.message,
    );
    ctx.recorder.event(cluster, "Warning", "AutomaticRecovery", "Recover", decision.message);
  }
  return decision;
}
