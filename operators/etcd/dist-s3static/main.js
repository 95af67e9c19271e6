import { createRequire as __cr } from "node:module"; const require = __cr(import.meta.url);
import {
  deleteS3Object
} from "./chunks/chunk-FDDPOAO3.js";
import {
  RESTORE_CLAIM_ANNOTATION,
  RESTORE_REQUEST_ANNOTATION,
  RESTORE_TIME_ANNOTATION,
  resolveRestoreSource,
  restoreJob,
  restoreJobName,
  restoreJobSeed,
  restoreSourceName
} from "./chunks/chunk-LEIOOQAL.js";
import {
  ApiError,
  BACKUP_CLIENT_CN,
  BACKUP_LABEL,
  BACKUP_LOCATION_ANNOTATION,
  BACKUP_MEMBER_ANNOTATION,
  CERTIFICATES_ANNOTATION,
  CLAIM_UID_LABEL,
  CLIENT_PORT,
  CLUSTER_LABEL,
  Controller,
  DEFAULT_ACCESS_KEY_ID_KEY,
  DEFAULT_BACKUP_DEADLINE_SECONDS,
  DEFAULT_BUMP_REVISION,
  DEFAULT_CA_KEY,
  DEFAULT_DELETION_POLICY,
  DEFAULT_S3_REGION,
  DEFAULT_SCHEDULED_DELETION_POLICY,
  DEFAULT_SECRET_ACCESS_KEY_KEY,
  DEFAULT_STORAGE_SIZE,
  EtcdBackupKind,
  EtcdClusterKind,
  FORCE_NEW_CLUSTER_ANNOTATION,
  GROUP,
  Job,
  MANAGED_BY,
  MEMBER_LABEL,
  METRICS_PORT,
  Manager,
  NAME_RULE,
  NetworkPolicy,
  OPERATOR_CLIENT_CN,
  OPERATOR_OWNED_FLAGS,
  PEER_PORT,
  POD_TEMPLATE_HASH_ANNOTATION,
  PersistentVolumeClaim,
  Pod,
  PodDisruptionBudget,
  ROOT_PASSWORD_KEY,
  ROOT_USER,
  SEED_CLAIM_ANNOTATION,
  Secret,
  Service,
  UPLOAD_CONTAINER,
  VERIFY_CONTAINER,
  VERSION,
  addFinalizer,
  annotatePods,
  annotationsChanged,
  applyClaimRetention,
  applyIfChanged,
  backupClientSecretName,
  backupJob,
  backupLocation,
  backupSpecSchema,
  caSecretName,
  certificateInfo,
  claimBelongsTo,
  claimRetentionPatch,
  clientEndpoint,
  clientScheme,
  clientServiceName,
  clientTLS,
  clusterLabels,
  clusterRef,
  conditionsSchema,
  controller,
  createCA,
  createLogger,
  dataClaimName,
  defineKind,
  deleteJob,
  deleteJobName,
  etcdImage,
  fence,
  findCondition,
  flagEnvName,
  generationChanged,
  hasFinalizer,
  isAlreadyExists,
  isApiError,
  isNotFound,
  issueCertificate,
  jobLocation,
  managedBySelectors,
  memberClientTLSSecretName,
  memberCommonName,
  memberHosts,
  memberLabels,
  memberName,
  memberNameFromPeerURL,
  memberPod,
  memberTLSSecretName,
  oldestOpenRequest,
  operatorClientSecret,
  operatorClientSecretName,
  operatorCommandLine,
  or,
  parseGoDuration,
  parseSnapshotStatus,
  parseUploadResult,
  peerServiceName,
  peerTLS,
  peerURL,
  podTemplateHash,
  removeCondition,
  removeFinalizer,
  renewalReason,
  requestFromLabel,
  require_prom_client,
  restoreSourceSchema,
  retainedClaim,
  rootSecret,
  rootSecretField,
  rootSecretName,
  selectorLabels,
  selectorString,
  separateClientCertificates,
  setCondition,
  setControllerReference,
  shutdownSignal,
  signedBy,
  splitPemBundle,
  statusMergePatch,
  tlsSecret,
  uploadTarget,
  watch,
  withForceNewCluster
} from "./chunks/chunk-27BPVPNY.js";
import {
  require_undici
} from "./chunks/chunk-QWCNFEPG.js";
import "./chunks/chunk-Z6WN2YAM.js";
import "./chunks/chunk-7BHEFNLD.js";
import {
  __toESM
} from "./chunks/chunk-ANXZA7FK.js";

// src/desired/network-policy.ts
var DEFAULT_OPERATOR_POD_LABELS = {
  "app.kubernetes.io/name": "etcd-operator"
};
function podSelectorLabels(json) {
  if (json === void 0 || json.trim() === "") return { ...DEFAULT_OPERATOR_POD_LABELS };
  let parsed;
  try {
    parsed = JSON.parse(json);
  } catch (err) {
    throw new Error(
      `POD_SELECTOR_LABELS must be a JSON object of label names to values: ${err.message}`
    );
  }
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed) || Object.keys(parsed).length === 0 || !Object.values(parsed).every((v2) => typeof v2 === "string")) {
    throw new Error(
      `POD_SELECTOR_LABELS must be a non-empty JSON object of label names to string values, got ${json}`
    );
  }
  return parsed;
}
function networkPolicyName(cluster) {
  return `${clusterRef(cluster).name}-etcd`;
}
function selector(s) {
  return {
    ...s.matchLabels === void 0 ? {} : { matchLabels: s.matchLabels },
    ...s.matchExpressions === void 0 ? {} : { matchExpressions: s.matchExpressions }
  };
}
function networkPolicy(cluster, operator) {
  const { name, namespace } = clusterRef(cluster);
  const members = { podSelector: { matchLabels: selectorLabels(cluster) } };
  const backups = {
    podSelector: { matchLabels: { "app.kubernetes.io/name": "etcd-backup", [CLUSTER_LABEL]: name } }
  };
  const operatorPeer = operator === void 0 ? [] : [
    {
      podSelector: { matchLabels: operator.labels },
      namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": operator.namespace } }
    }
  ];
  const clients = (cluster.spec.network?.clientSelectors ?? []).map((c) => ({
    ...c.podSelector === void 0 ? {} : { podSelector: selector(c.podSelector) },
    ...c.namespaceSelector === void 0 ? {} : { namespaceSelector: selector(c.namespaceSelector) }
  }));
  const policy = {
    apiVersion: "networking.k8s.io/v1",
    kind: "NetworkPolicy",
    metadata: { name: networkPolicyName(cluster), namespace, labels: clusterLabels(cluster) },
    spec: {
      podSelector: { matchLabels: selectorLabels(cluster) },
      policyTypes: ["Ingress"],
      ingress: [
        { from: [members], ports: [{ protocol: "TCP", port: PEER_PORT }] },
        {
          from: [members, ...operatorPeer, backups, ...clients],
          ports: [{ protocol: "TCP", port: CLIENT_PORT }]
        },
        { ports: [{ protocol: "TCP", port: METRICS_PORT }] }
      ]
    }
  };
  setControllerReference(cluster, EtcdClusterKind, policy);
  return policy;
}

// src/plan/fence.ts
function fence2(present, step2) {
  return fence(present, step2, { operand: "etcd", server: "member" });
}

// src/api/etcd-restore.ts
var KEPT_BY_RESTORE_LABEL = "etcd.capstan.dev/kept-by-restore";
var RECOVERY_FINALIZER = "etcd.capstan.dev/recovery";
var AUTOMATIC_RESTORE_LABEL = "etcd.capstan.dev/automatic-recovery";
function restoreEnded(phase) {
  return phase === "Succeeded" || phase === "Failed" || phase === "Cancelled";
}
var EtcdRestoreKind = defineKind({
  group: GROUP,
  version: VERSION,
  kind: "EtcdRestore",
  plural: "etcdrestores",
  namespaced: true
});
var etcdRestoreSchema = {
  type: "object",
  description: "A one-shot recovery of an EtcdCluster that lost quorum, from the surviving member with the most recent data or from a backup. Deleting it before the cluster is forked (force-new-cluster, or the seed's restore) calls the recovery off: the claims it kept are given back and the stopped members start again; after the fork the deletion waits for the recovery to finish (finalizer etcd.capstan.dev/recovery).",
  required: ["spec"],
  properties: {
    apiVersion: { type: "string" },
    kind: { type: "string" },
    metadata: { type: "object" },
    spec: {
      type: "object",
      description: "The recovery asked for; immutable.",
      required: ["clusterName", "from"],
      properties: {
        clusterName: {
          type: "string",
          description: "The EtcdCluster, in the same namespace, that lost quorum.",
          minLength: 1,
          maxLength: 50
        },
        from: {
          type: "string",
          enum: ["Survivor", "Backup"],
          description: "Survivor: the member with the most recent data (highest raft index) is restarted once with --force-new-cluster, the others are replaced by learners. Backup: every old member's claim is kept and its pod stopped, a new seed is restored from spec.source and started as a new cluster (new cluster ID, revision bumped), and the cluster grows back with learners."
        },
        source: restoreSourceSchema(
          "source",
          "With from: Backup (required then): the snapshot, exactly one of backup, s3 or pvc, as in an EtcdCluster's spec.bootstrap.restore. It is checked (backup Succeeded, sha256, etcd version against the cluster's spec.version) before anything of the cluster is changed."
        )
      },
      "x-kubernetes-validations": [
        { rule: "self == oldSelf", message: "spec is immutable: create another EtcdRestore" },
        {
          rule: "self.from == 'Backup' ? has(self.source) : !has(self.source)",
          message: "spec.source is required with from: Backup and not allowed with from: Survivor",
          fieldPath: ".source"
        }
      ]
    },
    status: {
      type: "object",
      properties: {
        phase: {
          type: "string",
          enum: ["Pending", "Running", "Succeeded", "Failed", "Cancelled"],
          description: "Running until it ends: Succeeded, Failed, or Cancelled (a quorum answered again before the cluster was forked: every claim it kept was given back and the survivor mark removed)."
        },
        message: {
          type: "string",
          description: "Why it failed or was cancelled, or what it waits for (a deletion held after the fork says so)."
        },
        conditions: {
          type: "array",
          items: { type: "object", "x-kubernetes-preserve-unknown-fields": true }
        },
        survivor: { type: "string", description: "The member recovered from." },
        raftIndex: {
          type: "integer",
          format: "int64",
          description: "The survivor's raft index when chosen."
        },
        revision: { type: "integer", format: "int64", description: "The revision recovered to." },
        source: { type: "string", description: "From a backup: the snapshot restored." },
        snapshotRevision: {
          type: "integer",
          format: "int64",
          description: "From a backup: the snapshot's revision (when its EtcdBackup recorded it)."
        },
        seed: {
          type: "string",
          description: "From a backup: the new seed member restored from the snapshot."
        },
        clusterID: { type: "string", description: "The cluster ID after the recovery (hexadecimal)." },
        keptClaims: {
          type: "array",
          items: { type: "string" },
          description: "Claims of the replaced members, kept (labelled etcd.capstan.dev/kept-by-restore=<name>); delete them yourself once no longer needed. A recovery called off before the fork gives each back to the cluster and drops it from this list."
        },
        startTime: { type: "string", format: "date-time" },
        completionTime: { type: "string", format: "date-time" }
      }
    }
  }
};

// src/plan/recovery-calloff.ts
function forkedAt(o) {
  if (o.from === "Backup") {
    const b2 = o.backup;
    if (b2 === void 0) return void 0;
    const seeded = b2.restore.claims.some((c) => c.name === b2.seed) || b2.restore.job !== void 0 || o.members.some((m) => m.name === b2.seed && (m.claimOwned || m.pod));
    return seeded ? "StartRestore" : void 0;
  }
  const forced = o.members.some(
    (m) => m.survivorMark === true && (m.recoveryPhase !== void 0 || m.forceNewCluster === true)
  );
  return forced ? "ForceNewCluster" : void 0;
}
function deletionHeld(o) {
  if (o.deleting !== true) return void 0;
  const step2 = forkedAt(o);
  if (step2 === void 0) return void 0;
  return `deletion waits for the recovery to finish (the cluster was forked at ${step2}); remove the finalizer by hand only if the operator is gone for good or the recovery can never finish (finalizer ${RECOVERY_FINALIZER}), and then finish or undo the recovery yourself: the claims it kept are labelled etcd.capstan.dev/kept-by-restore=${o.request}`;
}
function planCallOff(o) {
  const reason = o.deleting === true ? "Deleted" : o.quorum ? "QuorumReturned" : void 0;
  if (reason === void 0 || forkedAt(o) !== void 0) return void 0;
  const byName2 = [...o.members].sort((a, b2) => a.name < b2.name ? -1 : a.name > b2.name ? 1 : 0);
  const started = (m) => m.claimKept === true || m.survivorMark === true;
  if (reason === "QuorumReturned" && o.finalizer !== true && !byName2.some(started)) return void 0;
  const why = reason === "Deleted" ? `EtcdRestore ${o.request} is being deleted before the recovery forked the cluster` : `a quorum of members answers again before EtcdRestore ${o.request} forked the cluster`;
  const kept = byName2.find((m) => m.claimKept === true);
  if (kept !== void 0) {
    return {
      type: "GiveBackClaim",
      name: kept.name,
      message: `${why}: giving the claim of ${kept.name} back to the cluster (the kept-by-restore label removed, owned as storage.whenDeleted says)`
    };
  }
  const marked = byName2.find((m) => m.survivorMark === true);
  if (marked !== void 0) {
    return {
      type: "RemoveSurvivorMark",
      name: marked.name,
      message: `${why}: removing the survivor mark from the claim of ${marked.name}`
    };
  }
  return {
    type: "CallOff",
    reason,
    message: reason === "Deleted" ? `recovery called off: EtcdRestore ${o.request} was deleted before the cluster was forked; every claim it kept is the cluster's again and the stopped members start again on their own data` : `recovery called off (Cancelled): a quorum of members answers again before the cluster was forked, so there is nothing to recover; every claim it kept is the cluster's again and the stopped members start again on their own data`
  };
}

// src/plan/etcd-version.ts
function parseEtcdVersion(text) {
  const m = /^v?(\d+)\.(\d+)\.(\d+)$/.exec(text.trim());
  if (m === null) return void 0;
  return { major: Number(m[1]), minor: Number(m[2]), patch: Number(m[3]) };
}
function compareEtcdVersions(a, b2) {
  return a.major - b2.major || a.minor - b2.minor || a.patch - b2.patch;
}
function formatEtcdVersion(v2) {
  return `${v2.major}.${v2.minor}.${v2.patch}`;
}
var MIN_35_FOR_36 = { major: 3, minor: 5, patch: 32 };
function unsupportedVersionChange(from, to) {
  const f2 = formatEtcdVersion(from);
  const t = formatEtcdVersion(to);
  if (from.major !== to.major) return `changing the major version (${f2} -> ${t}) is not supported`;
  if (to.minor < from.minor) {
    return `downgrading from ${f2} to ${t} is not supported; set version back to a ${from.major}.${from.minor}.x release`;
  }
  if (to.minor > from.minor + 1) {
    return `upgrading from ${f2} to ${t} skips a minor release; upgrade to ${from.major}.${from.minor + 1}.x first`;
  }
  if (from.major === 3 && from.minor === 5 && to.minor === 6 && compareEtcdVersions(from, MIN_35_FOR_36) < 0) {
    const min = formatEtcdVersion(MIN_35_FOR_36);
    return `upgrading from ${f2} to ${t} is not supported by etcd: every 3.5 member must first run ${min} or later (etcd's v3.5 -> v3.6 upgrade guide); set version to ${min} or a later 3.5 release first`;
  }
  return void 0;
}

// src/plan/restore.ts
var FIELD = "spec.bootstrap.restore";
function planRestore(spec, observed, options) {
  const restore = spec.bootstrap?.restore;
  if (restore === void 0) return void 0;
  const r = observed.restore ?? { claims: [], operatorImage: false };
  if (r.claims.some((c) => c.state === "done")) return void 0;
  const pending = r.claims.filter((c) => c.state === "pending").map((c) => c.name).sort();
  const other = observed.volumes.filter((v2) => !pending.includes(v2));
  if (other.length > 0 || observed.pods.length > 0) return void 0;
  const terminating = observed.terminating ?? [];
  if (terminating.length > 0) {
    return {
      type: "Wait",
      reason: "PodTerminating",
      message: `waiting for ${terminating.map((p) => p.name).join(", ")} to go away before restoring`
    };
  }
  if (restore.backup !== void 0) {
    const name = restore.backup.name;
    const b2 = r.backup;
    if (b2 === void 0) {
      return degraded(
        "RestoreBackupMissing",
        `${FIELD}.backup.name`,
        `EtcdBackup ${name} named in ${FIELD}.backup does not exist in this namespace; the restore waits for it (nothing is created until then)`
      );
    }
    if (b2.phase !== "Succeeded") {
      return degraded(
        "RestoreBackupNotSucceeded",
        `${FIELD}.backup.name`,
        `EtcdBackup ${name} is ${b2.phase ?? "not yet started"}, not Succeeded; the restore waits until it succeeds (or name another backup in a new EtcdCluster)`
      );
    }
    if (restore.sha256 !== void 0 && b2.sha256 !== void 0 && restore.sha256 !== b2.sha256) {
      return degraded(
        "RestoreChecksumMismatch",
        `${FIELD}.sha256`,
        `${FIELD}.sha256 is ${restore.sha256} but EtcdBackup ${name} recorded ${b2.sha256}: not restoring a snapshot other than the one expected`
      );
    }
    const target = parseEtcdVersion(spec.version);
    const from = b2.etcdVersion === void 0 ? void 0 : parseEtcdVersion(b2.etcdVersion);
    if (target === void 0) {
      return degraded(
        "InvalidVersion",
        "spec.version",
        `spec.version "${spec.version}" is not MAJOR.MINOR.PATCH`
      );
    }
    const refused = from === void 0 ? void 0 : unsupportedVersionChange(from, target);
    if (refused !== void 0) {
      return degraded(
        "UnsupportedVersionChange",
        "spec.version",
        `spec.version: the snapshot in EtcdBackup ${name} was taken from etcd ${b2.etcdVersion}: ${refused}`
      );
    }
  }
  if (r.sourceError !== void 0) return degraded("RestoreSourceInvalid", FIELD, r.sourceError);
  if (!r.operatorImage) {
    return degraded(
      "RestoreUnavailable",
      FIELD,
      "the operator does not know its own image (the restore Job runs it): set the chart's image or OPERATOR_IMAGE"
    );
  }
  const seed = pending[0];
  if (r.job?.seed !== void 0 && r.job.seed !== seed) {
    return degraded(
      "RestoreJobStale",
      FIELD,
      `the restore Job wrote into the claim of seed ${r.job.seed}, which ${seed === void 0 ? "is gone" : `is not the pending seed ${seed}`}: delete the restore Job to restore ${sourceName(spec)} again (a finished Job is never trusted for another claim)`
    );
  }
  if (seed === void 0) {
    return {
      type: "StartRestore",
      name: options.freshName,
      message: `restoring seed member ${options.freshName} from ${sourceName(spec)}`
    };
  }
  const job = r.job;
  if (job === void 0) {
    return {
      type: "StartRestore",
      name: seed,
      message: `restoring seed member ${seed} from ${sourceName(spec)}`
    };
  }
  if (job.failed !== void 0) {
    return degraded(
      "RestoreFailed",
      FIELD,
      `the restore of ${sourceName(spec)} into ${seed} failed (${job.failed.reason}): ${job.failed.message}; fix the source, then delete the restore Job to try again (the seed's claim is reused, nothing else was made)`
    );
  }
  if (!job.succeeded) {
    return {
      type: "Wait",
      reason: "Restoring",
      message: `restoring ${sourceName(spec)} into seed member ${seed}`
    };
  }
  return {
    type: "FinishRestore",
    name: seed,
    message: `restored ${sourceName(spec)} into seed member ${seed}; starting it`
  };
}
function sourceName(spec) {
  const r = spec.bootstrap?.restore;
  if (r?.backup !== void 0) return `EtcdBackup ${r.backup.name}`;
  if (r?.s3 !== void 0) return `s3://${r.s3.bucket}/${r.s3.key}`;
  if (r?.pvc !== void 0) return `pvc://${r.pvc.claimName}/${r.pvc.path}`;
  return "the snapshot";
}
function degraded(reason, field, message) {
  return { type: "Degraded", reason, field, message };
}

// src/plan/recovery.ts
function chooseSurvivor(members) {
  return members.filter((m) => m.claimOwned && m.status !== void 0 && m.learner !== true).sort(
    (a, b2) => b2.status.raftIndex - a.status.raftIndex || b2.status.revision - a.status.revision || (a.name < b2.name ? -1 : a.name > b2.name ? 1 : 0)
  )[0];
}
function quorumHealthy() {
  return {
    type: "Refuse",
    reason: "QuorumHealthy",
    message: "a quorum of members answers: there is nothing to recover (nothing was changed)"
  };
}
function lossUnconfirmed(unconfirmed) {
  return {
    type: "Refuse",
    reason: "QuorumLossUnconfirmed",
    message: `the loss of quorum is not confirmed (${unconfirmed.reason}: ${unconfirmed.message}); nothing was changed: fix what cuts the operator off, then create another EtcdRestore if a quorum is still lost`
  };
}
function sortedByName(members) {
  return [...members].sort((a, b2) => a.name < b2.name ? -1 : a.name > b2.name ? 1 : 0);
}
function planRecovery(o) {
  const calledOff = planCallOff(o);
  if (calledOff !== void 0) return calledOff;
  if (o.from === "Backup") return planFromBackup(o);
  const byName2 = sortedByName(o.members);
  const started = byName2.some((m) => m.survivorMark === true || m.claimKept === true);
  let survivor;
  if (!started) {
    if (o.quorum) {
      return quorumHealthy();
    }
    if (o.unconfirmed !== void 0) return lossUnconfirmed(o.unconfirmed);
    if (o.from === "Survivor") {
      survivor = chooseSurvivor(byName2);
      const learners2 = byName2.filter((m) => m.claimOwned && m.status !== void 0 && m.learner === true);
      if (survivor === void 0 && learners2.length > 0) {
        return {
          type: "Refuse",
          reason: "OnlyLearnersSurvive",
          message: `only learners answer (${learners2.map((m) => m.name).join(", ")}): a learner never holds the cluster's committed data for sure and etcd refuses to force a new cluster on one ("removed all voters"); recover from a backup (another EtcdRestore with from: Backup and spec.source); nothing was changed`
        };
      }
      if (survivor === void 0) {
        return {
          type: "Refuse",
          reason: "NoSurvivor",
          message: "no member with its data answers: recovery from a survivor is impossible; recover from a backup (another EtcdRestore with from: Backup and spec.source)"
        };
      }
      const s = survivor.status;
      return {
        type: "MarkSurvivor",
        name: survivor.name,
        raftIndex: s.raftIndex,
        revision: s.revision,
        message: `recovering from ${survivor.name}, the member with the most recent data (raft index ${s.raftIndex}, revision ${s.revision})`
      };
    }
  } else if (o.from === "Survivor") {
    survivor = byName2.find((m) => m.survivorMark === true && m.claimOwned);
    if (survivor === void 0) {
      return {
        type: "Refuse",
        reason: "SurvivorLost",
        message: "the survivor's claim this recovery chose is gone: recover from a backup; the other members' claims are kept"
      };
    }
  }
  const keep = byName2.find((m) => m !== survivor && m.claimOwned);
  if (keep !== void 0) {
    return {
      type: "KeepClaim",
      name: keep.name,
      message: `keeping the claim of ${keep.name} for you (labelled, no longer owned by the cluster); it is not deleted`
    };
  }
  const stop = byName2.find((m) => m !== survivor && (m.pod || m.podEnded === true));
  if (stop !== void 0) {
    return {
      type: "StopMember",
      name: stop.name,
      message: `stopping ${stop.name}, replaced by the recovery (its claim is kept)`
    };
  }
  if (survivor === void 0) {
    return {
      type: "Refuse",
      reason: "NoSurvivor",
      message: "no survivor is chosen (a bug: please report it)"
    };
  }
  const learnersLeft = survivor.learnersListed ?? [];
  const alone = survivor.membersListed !== void 0 && survivor.membersListed - learnersLeft.length === 1 && survivor.healthy === true;
  const start = (force) => ({
    type: "StartSurvivor",
    name: survivor.name,
    forceNewCluster: force,
    message: `starting ${survivor.name} on its data ${force ? "with" : "without"} --force-new-cluster`
  });
  const phase = survivor.recoveryPhase;
  if (phase === void 0) {
    if (survivor.learner === true) {
      return {
        type: "Refuse",
        reason: "SurvivorIsLearner",
        message: `${survivor.name}, the survivor this recovery chose, answers as a learner: etcd refuses to force a new cluster on one ("removed all voters"); recover from a backup; the other members' claims are kept`
      };
    }
    const fenced = fence2(
      othersPresent(byName2, survivor.name),
      `restarting ${survivor.name} with --force-new-cluster`
    );
    if (fenced !== void 0) return fenced;
  }
  if (phase === void 0 || phase === "force" && survivor.pod && survivor.forceNewCluster !== true) {
    return {
      type: "ForceNewCluster",
      name: survivor.name,
      message: `restarting ${survivor.name} with --force-new-cluster on its data`
    };
  }
  if (!survivor.pod) return start(phase === "force");
  if (phase === "force" || survivor.forceNewCluster === true) {
    if (!alone && phase === "force") {
      return {
        type: "Wait",
        reason: "ForceNewCluster",
        message: `waiting for ${survivor.name} to start as a one-member cluster`
      };
    }
    return {
      type: "RemoveForceFlag",
      name: survivor.name,
      message: `${survivor.name} answers as a one-member cluster: restarting it without --force-new-cluster`
    };
  }
  if (!alone || survivor.status === void 0) {
    return { type: "Wait", reason: "SurvivorStarting", message: `waiting for ${survivor.name} to serve` };
  }
  const learner = learnersLeft[0];
  if (learner !== void 0) {
    return {
      type: "RemoveLearner",
      name: survivor.name,
      learner: learner.name,
      memberId: learner.id,
      message: `removing learner ${learner.name || learner.id}, left in the member list of ${survivor.name} by --force-new-cluster (etcd-io/etcd#20893)`
    };
  }
  return {
    type: "Recovered",
    survivor: survivor.name,
    revision: survivor.status.revision,
    clusterID: survivor.status.clusterID,
    message: `recovered from ${survivor.name} at revision ${survivor.status.revision}, cluster ID ${survivor.status.clusterID}; the cluster re-grows with learners`
  };
}
var BACKUP_NOT_YET = /* @__PURE__ */ new Set(["RestoreBackupMissing", "RestoreBackupNotSucceeded"]);
function planFromBackup(o) {
  const b2 = o.backup;
  if (b2 === void 0) {
    return {
      type: "Refuse",
      reason: "BackupUnusable",
      field: "spec.source",
      message: "spec.source is required with from: Backup: name an EtcdBackup, an S3 object or a file on a PVC"
    };
  }
  const byName2 = sortedByName(o.members);
  const old = byName2.filter((m) => m.name !== b2.seed);
  const seed = byName2.find((m) => m.name === b2.seed);
  const seedClaim = b2.restore.claims.find((c) => c.name === b2.seed);
  const started = old.some((m) => m.claimKept === true) || seedClaim !== void 0;
  if (!started) {
    if (o.quorum) {
      return quorumHealthy();
    }
    if (o.unconfirmed !== void 0) return lossUnconfirmed(o.unconfirmed);
    if (b2.spec.storage.ephemeral === true) {
      return {
        type: "Refuse",
        reason: "NeedsStorage",
        field: "spec.storage",
        message: "recovery from a backup needs persistent storage (the EtcdCluster's spec.storage.size): the snapshot is restored into the seed's claim (nothing was changed)"
      };
    }
    if (seed !== void 0) {
      return {
        type: "Refuse",
        reason: "SeedNameInUse",
        message: `the seed name ${b2.seed} derived from this EtcdRestore is used by a member already: create another EtcdRestore (nothing was changed)`
      };
    }
    const check = planRestore(b2.spec, restoreView(b2), { freshName: b2.seed });
    if (check?.type === "Degraded") {
      const failed = b2.restore.backup?.phase === "Failed";
      if (BACKUP_NOT_YET.has(check.reason) && !failed) {
        return {
          type: "Wait",
          reason: "BackupNotReady",
          message: `${sourceField(check.message)}; nothing of the cluster is changed until then`
        };
      }
      return {
        type: "Refuse",
        reason: "BackupUnusable",
        field: sourceField(check.field ?? "spec.source"),
        message: `${sourceField(check.message)} (nothing of the cluster was changed)`
      };
    }
    if (check?.type === "Wait") return check;
  }
  const keep = old.find((m) => m.claimOwned);
  if (keep !== void 0) {
    return {
      type: "KeepClaim",
      name: keep.name,
      message: `keeping the claim of ${keep.name} for you (labelled, no longer owned by the cluster); it is not deleted`
    };
  }
  const stop = old.find((m) => m.pod || m.podEnded === true);
  if (stop !== void 0) {
    return {
      type: "StopMember",
      name: stop.name,
      message: `stopping ${stop.name}, replaced by the recovery from ${b2.source} (its claim is kept)`
    };
  }
  if (seedClaim === void 0 && b2.restore.job !== void 0) {
    return {
      type: "Wait",
      reason: "SeedClaimLost",
      message: `the claim of seed ${b2.seed} is gone but its restore Job exists: delete the Job to restore ${b2.source} again`
    };
  }
  if (seedClaim?.state !== "done") {
    const fenced = fence2(othersPresent(byName2, b2.seed), `restoring ${b2.source} into seed ${b2.seed}`);
    if (fenced !== void 0) return fenced;
  }
  const restoring = planRestore(b2.spec, restoreView(b2), { freshName: b2.seed });
  if (restoring !== void 0) {
    if (restoring.type === "Degraded") {
      return {
        type: "Wait",
        reason: restoring.reason,
        message: `${sourceField(restoring.message)} (the old members are stopped and their claims kept)`
      };
    }
    if (restoring.type === "StartRestore" || restoring.type === "FinishRestore" || restoring.type === "Wait") {
      return restoring;
    }
    return { type: "Wait", reason: "Restoring", message: restoring.message };
  }
  if (seedClaim?.state !== "done") {
    return { type: "Wait", reason: "Restoring", message: `restoring ${b2.source} into seed ${b2.seed}` };
  }
  if (seed?.pod !== true) {
    return {
      type: "StartSeed",
      name: b2.seed,
      message: `restored ${b2.source} into ${b2.seed}: starting it as a new cluster`
    };
  }
  if (seed.healthy !== true || seed.membersListed !== 1 || seed.status === void 0) {
    return { type: "Wait", reason: "SeedStarting", message: `waiting for seed ${b2.seed} to serve` };
  }
  const snapshotRevision = b2.restore.backup?.revision;
  return {
    type: "Recovered",
    seed: b2.seed,
    source: b2.source,
    ...snapshotRevision === void 0 ? {} : { snapshotRevision },
    revision: seed.status.revision,
    clusterID: seed.status.clusterID,
    message: `recovered from ${b2.source}${snapshotRevision === void 0 ? "" : ` (snapshot revision ${snapshotRevision})`} into ${b2.seed}: revision ${seed.status.revision}, new cluster ID ${seed.status.clusterID}; the cluster re-grows with learners`
  };
}
function othersPresent(members, keep) {
  return members.filter((m) => m.name !== keep && (m.pod || m.podEnded === true || m.terminating !== void 0)).map((m) => ({
    name: m.name,
    ...m.terminating === void 0 ? {} : { terminatingSince: m.terminating.since },
    ...m.terminating?.node === void 0 ? {} : { node: m.terminating.node }
  }));
}
function restoreView(b2) {
  const claims = b2.restore.claims.filter((c) => c.name === b2.seed);
  return {
    etcd: { reachable: false, error: "recovering from a backup" },
    pods: [],
    volumes: claims.map((c) => c.name),
    bootstrapped: false,
    terminating: [],
    restore: { ...b2.restore, claims }
  };
}
function sourceField(text) {
  return text.replaceAll("spec.bootstrap.restore", "spec.source");
}

// src/plan/automatic-recovery.ts
var DEFAULT_AUTOMATIC_AFTER_SECONDS = 900;
var MIN_AUTOMATIC_AFTER_SECONDS = 300;
var DEFAULT_AUTOMATIC_FLOOR_SECONDS = 900;
var FIELD2 = "spec.recovery.automatic";
function planAutomaticRecovery(o) {
  if (o.quorum || !o.bootstrapped || o.unconfirmed !== void 0) return { type: "None" };
  const lostSince = o.lostSince ?? o.now;
  const wait2 = (message) => ({ type: "Wait", lostSince, message });
  if (!o.enabled) return wait2("quorum lost; automatic recovery is off");
  const active = o.restores.find(
    (r) => r.phase !== "Succeeded" && r.phase !== "Failed" && r.phase !== "Cancelled"
  );
  if (active !== void 0) return wait2(`EtcdRestore ${active.name} is under way`);
  const failed = o.restores.filter((r) => r.automatic && r.phase === "Failed").sort((a, b2) => a.name < b2.name ? -1 : 1)[0];
  if (failed !== void 0) {
    return {
      type: "Blocked",
      lostSince,
      name: failed.name,
      message: `the automatic recovery ${failed.name} failed: ${FIELD2} makes no other; recover by hand (an EtcdRestore) and delete ${failed.name} to re-arm it`
    };
  }
  const terminating = [...o.terminating ?? []].sort((a, b2) => a.name < b2.name ? -1 : 1);
  if (terminating.length > 0) {
    const pods = terminating.map((p) => p.name);
    return {
      type: "Failover",
      pods,
      message: `${FIELD2} waits for Kubernetes' failover: the pods of ${terminating.map((p) => `${p.name} (being deleted since ${p.since.toISOString()})`).join(", ")} have not gone yet; the clock starts once they are gone, so their members can come back on their own data. A pod stuck Terminating on a node that is down for good is force-deleted by the node's lifecycle or by you (kubectl delete pod --force) once the node is confirmed down`
    };
  }
  const after = Math.max(o.afterSeconds, o.floorSeconds ?? DEFAULT_AUTOMATIC_FLOOR_SECONDS) * 1e3;
  const due = new Date(lostSince.getTime() + after);
  if (o.now < due) {
    return wait2(
      `quorum lost since ${lostSince.toISOString()}; ${FIELD2} recovers (from the member with the newest data, or the newest backup) at ${due.toISOString()}`
    );
  }
  if (o.paused) return wait2(`quorum lost since ${lostSince.toISOString()}; spec.paused holds ${FIELD2} back`);
  const name = o.nameFor(lostSince);
  if (o.restores.some((r) => r.name === name)) {
    return wait2(`EtcdRestore ${name} for this loss of quorum exists already`);
  }
  const since = `quorum lost since ${lostSince.toISOString()} (over ${after / 1e3} s, ${FIELD2})`;
  const succeeded = o.backups.filter((b2) => b2.phase === "Succeeded");
  const newest = succeeded.filter((b2) => b2.clusterID !== void 0 && o.clusterIDs.includes(b2.clusterID)).sort(
    (a, b2) => (b2.completionTime?.getTime() ?? 0) - (a.completionTime?.getTime() ?? 0) || (a.name < b2.name ? 1 : a.name > b2.name ? -1 : 0)
  )[0];
  const chosen = chooseSurvivor(
    (o.survivors ?? []).filter((m) => m.status !== void 0 && o.clusterIDs.includes(m.status.clusterID))
  );
  const survivor = chosen?.status === void 0 ? void 0 : { name: chosen.name, ...chosen.status };
  if (survivor !== void 0 && (newest?.revision === void 0 || survivor.revision >= newest.revision)) {
    return {
      type: "CreateRestore",
      lostSince,
      name,
      from: "Survivor",
      survivor: survivor.name,
      message: `${since}: recovering from ${survivor.name}, the member with the newest data (revision ${survivor.revision}${newest === void 0 ? "" : `; the newest backup, EtcdBackup ${newest.name}, is older`}), with EtcdRestore ${name}; writes it did not receive are lost`
    };
  }
  if (newest === void 0) {
    const foreign = succeeded.map((b2) => `${b2.name} (${b2.clusterID ?? "no cluster ID recorded"})`);
    return {
      type: "NoBackup",
      lostSince,
      message: foreign.length === 0 ? `quorum lost since ${lostSince.toISOString()} and ${FIELD2} is on, but no member answers with this cluster's data and this cluster has no Succeeded EtcdBackup to recover from: recover by hand (an EtcdRestore from: Survivor, or from: Backup naming a snapshot)` : `quorum lost since ${lostSince.toISOString()} and ${FIELD2} is on, but no member answers with this cluster's data and no Succeeded EtcdBackup was taken from this cluster (cluster ID ${o.clusterIDs.join(" or ") || "unknown"}): ${foreign.join(", ")} hold other data (a cluster deleted and created again under the same name?) and are never restored automatically: recover by hand (an EtcdRestore from: Survivor, or from: Backup naming the snapshot you choose)`
    };
  }
  const older = survivor === void 0 ? "" : ` (${survivor.name} answers, but at revision ${survivor.revision}, older than the backup's ${newest.revision})`;
  return {
    type: "CreateRestore",
    lostSince,
    name,
    from: "Backup",
    backup: newest.name,
    message: `${since}: recovering from the newest backup, EtcdBackup ${newest.name}${older}, with EtcdRestore ${name}; writes made after that backup are lost`
  };
}

// src/plan/backup-member.ts
var DEFAULT_MAX_BACKUP_LAG = 1e3;
function unfit(m, leader, leaderIndex, maxLag) {
  if (m.isLearner) return "a learner";
  if (!m.started) return "not started";
  if (!m.healthy) return "not healthy";
  if (m.raftIndex === void 0) return "its raft index is unknown";
  if (leader.clusterID !== void 0 && m.clusterID !== void 0 && m.clusterID !== leader.clusterID) {
    return `in cluster ${m.clusterID}, not the leader's ${leader.clusterID}`;
  }
  if (leaderIndex - m.raftIndex > maxLag) {
    return `${leaderIndex - m.raftIndex} raft entries behind the leader (more than ${maxLag})`;
  }
  return void 0;
}
function chooseBackupMember(members, maxLag = DEFAULT_MAX_BACKUP_LAG) {
  const leaders = members.filter((m) => m.leader && !m.isLearner);
  const leader = leaders[0];
  if (leader === void 0 || leaders.length > 1) {
    return {
      ok: false,
      reason: leader === void 0 ? "no member reports itself leader: without a quorum no member can be shown to be caught up" : `several members report themselves leader (${leaders.map((m) => m.name).join(", ")}): waiting for one`
    };
  }
  if (leader.raftIndex === void 0) {
    return {
      ok: false,
      reason: `the leader ${leader.name} reports no raft index: no member can be shown caught up`
    };
  }
  const leaderIndex = leader.raftIndex;
  const refusals = [];
  const fit = members.filter((m) => {
    const why = unfit(m, leader, leaderIndex, maxLag);
    if (why !== void 0) refusals.push(`${m.name || m.id}: ${why}`);
    return why === void 0;
  });
  const best = fit.sort(
    (a, b2) => Number(a.leader) - Number(b2.leader) || (b2.raftIndex ?? 0) - (a.raftIndex ?? 0) || (a.name < b2.name ? -1 : a.name > b2.name ? 1 : 0)
  )[0];
  if (best === void 0)
    return { ok: false, reason: `no member can serve a snapshot: ${refusals.join("; ")}` };
  return {
    ok: true,
    member: best.name,
    leader: best.leader,
    raftIndex: best.raftIndex ?? 0,
    ...best.version === void 0 ? {} : { version: best.version }
  };
}

// src/plan/backup.ts
var BACKUP_REQUEUE = { waiting: 1e4, degraded: 6e4 };
var conds = (phase, reason, message, degraded3) => [
  {
    type: "Available",
    status: phase === "Succeeded" ? "True" : "False",
    reason: phase === "Succeeded" ? "Stored" : reason,
    message: phase === "Succeeded" ? message : `no snapshot stored: ${message}`
  },
  {
    type: "Progressing",
    status: phase === "Running" ? "True" : "False",
    reason,
    message
  },
  {
    type: "Degraded",
    status: degraded3 ? "True" : "False",
    reason: degraded3 ? reason : "AsExpected",
    message: degraded3 ? message : ""
  }
];
var snapshotMessage = (job, member) => `the Job ${job} takes the snapshot${member === void 0 ? "" : ` from ${member}`}`;
function planBackup(input) {
  const { backup, cluster, job, now } = input;
  const name = backup.metadata.name ?? "";
  const ns = backup.metadata.namespace ?? "";
  const { clusterName, destination } = backup.spec;
  const status = backup.status ?? {};
  const iso = (d) => d.toISOString();
  if (status.phase === "Succeeded" || status.phase === "Failed") {
    return { status: {}, conditions: [] };
  }
  const fail = (reason, message) => ({
    status: { phase: "Failed", completionTime: iso(job?.completionTime ?? now) },
    conditions: conds("Failed", reason, message, true),
    event: { type: "Warning", reason, message }
  });
  const deadlineSeconds = backup.spec.activeDeadlineSeconds ?? DEFAULT_BACKUP_DEADLINE_SECONDS;
  const created = backup.metadata.creationTimestamp;
  const pastDeadline = job === void 0 && created !== void 0 && now.getTime() - new Date(created).getTime() > deadlineSeconds * 1e3;
  const pending = (reason, message, degraded3) => pastDeadline ? fail(
    "DeadlineExceeded",
    `the backup could not start within ${deadlineSeconds} s of its creation (spec.activeDeadlineSeconds): ${message}`
  ) : waiting(reason, message, degraded3);
  const waiting = (reason, message, degraded3) => ({
    status: { phase: "Pending" },
    conditions: conds("Pending", reason, message, degraded3),
    ...status.phase !== "Pending" || status.conditions?.find((c) => c.type === "Progressing")?.reason !== reason ? { event: { type: degraded3 ? "Warning" : "Normal", reason, message } } : {},
    requeueAfter: degraded3 ? BACKUP_REQUEUE.degraded : BACKUP_REQUEUE.waiting
  });
  if (job !== void 0) {
    if (job.failed !== void 0) {
      return fail(
        `Job${job.failed.reason}`,
        `the backup Job ${name} failed (${job.failed.reason}): ${job.failed.message}`
      );
    }
    if (!job.succeeded) {
      return {
        status: {
          phase: "Running",
          jobName: name,
          ...job.member === void 0 ? {} : { member: job.member },
          ...status.startTime === void 0 ? { startTime: iso(job.startTime ?? now) } : {}
        },
        conditions: conds("Running", "SnapshotInProgress", snapshotMessage(name, job.member), false)
      };
    }
    const results = input.results;
    if (results === void 0) {
      return {
        status: { phase: "Running", jobName: name },
        conditions: conds(
          "Running",
          "ReadingResults",
          `the Job ${name} succeeded; reading its results`,
          false
        ),
        requeueAfter: BACKUP_REQUEUE.waiting
      };
    }
    if (results.upload === void 0) {
      return fail(
        "ResultUnreadable",
        `the Job ${name} succeeded but its upload container left no {location, size, sha256} termination message: check the upload container's log`
      );
    }
    if (results.snapshot === void 0) {
      return fail(
        "ResultUnreadable",
        `the Job ${name} succeeded but its verify container's log holds no etcdutl snapshot status line: check that container's log`
      );
    }
    const version = status.etcdVersion ?? results.snapshot.version;
    const location = jobLocation(backup, job.location);
    const message = `snapshot at revision ${results.snapshot.revision} (${results.upload.size} bytes) stored at ${location}`;
    return {
      status: {
        phase: "Succeeded",
        revision: results.snapshot.revision,
        size: results.upload.size,
        sha256: results.upload.sha256,
        location,
        ...version === void 0 ? {} : { etcdVersion: version },
        completionTime: iso(job.completionTime ?? now)
      },
      conditions: conds("Succeeded", "Stored", message, false),
      event: { type: "Normal", reason: "BackupSucceeded", message }
    };
  }
  if (cluster === void 0) {
    return pending(
      "ClusterNotFound",
      `spec.clusterName: EtcdCluster ${ns}/${clusterName} does not exist: create it, or create another EtcdBackup naming an existing cluster`,
      true
    );
  }
  if (destination.pvc !== void 0) {
    if (input.claim === void 0) {
      return pending(
        "ClaimNotFound",
        `spec.destination.pvc.claimName: PersistentVolumeClaim ${ns}/${destination.pvc.claimName} does not exist: create it`,
        true
      );
    }
    if (input.claim.etcdCluster !== void 0) {
      return fail(
        "ClaimOwnedByCluster",
        `spec.destination.pvc.claimName: ${destination.pvc.claimName} holds data of EtcdCluster ${input.claim.etcdCluster}; a backup must live on a claim no cluster owns (it would be lost with the member)`
      );
    }
  }
  if (input.secretsProblem !== void 0) {
    return fail(
      "CredentialsMissing",
      `${input.secretsProblem}: create it (or fix the field), then create another EtcdBackup (a schedule's next one picks it up)`
    );
  }
  if (input.members === void 0) {
    return pending(
      "ClusterUnreachable",
      `no member of EtcdCluster ${clusterName} answers: waiting for one`,
      false
    );
  }
  const choice = chooseBackupMember(input.members);
  if (!choice.ok) return pending("NoMemberToSnapshot", choice.reason, false);
  const clusterID = cluster.status?.clusterID;
  return {
    action: { type: "CreateJob", member: choice.member },
    status: {
      phase: "Running",
      jobName: name,
      member: choice.member,
      startTime: iso(now),
      ...choice.version === void 0 ? {} : { etcdVersion: choice.version },
      ...clusterID === void 0 ? {} : { clusterID }
    },
    conditions: conds("Running", "SnapshotInProgress", snapshotMessage(name, choice.member), false),
    event: {
      type: "Normal",
      reason: "BackupStarted",
      message: `snapshot of ${clusterName} from member ${choice.member}`
    }
  };
}

// src/plan/backup-deletion.ts
var SNAPSHOT_FINALIZER = "etcd.capstan.dev/delete-snapshot";
var none = { conditions: [] };
function stuck(reason, message) {
  const full = `${message}; the EtcdBackup stays until the snapshot is deleted (or the finalizer ${SNAPSHOT_FINALIZER} is removed by hand)`;
  return {
    conditions: [
      { type: "Progressing", status: "False", reason, message: full },
      { type: "Degraded", status: "True", reason, message: full }
    ],
    event: { type: "Warning", reason, message: full },
    requeueAfter: BACKUP_REQUEUE.degraded
  };
}
var deleting = (message) => [
  { type: "Progressing", status: "True", reason: "DeletingSnapshot", message }
];
function planBackupDeletion(input) {
  const { backup, backupJob: backupJob2, deleteJob: deleteJob2, claim } = input;
  const policy = backup.spec.deletionPolicy ?? DEFAULT_DELETION_POLICY;
  const held = backup.metadata.finalizers?.includes(SNAPSHOT_FINALIZER) === true;
  const beingDeleted = backup.metadata.deletionTimestamp !== void 0;
  if (!beingDeleted) {
    return policy === "Delete" && !held ? { action: { type: "AddFinalizer" }, conditions: [] } : none;
  }
  if (!held) return none;
  if (policy !== "Delete") return { action: { type: "RemoveFinalizer" }, conditions: [] };
  const location = backupLocation(backup);
  const status = backup.status ?? {};
  const mayHaveStored = backupJob2 !== void 0 || status.jobName !== void 0 || status.phase === "Succeeded";
  if (!mayHaveStored) {
    return {
      action: { type: "RemoveFinalizer" },
      conditions: [],
      event: {
        type: "Normal",
        reason: "NothingStored",
        message: "no snapshot was stored: nothing to delete"
      }
    };
  }
  if (backupJob2 !== void 0 && !backupJob2.succeeded && backupJob2.failed === void 0) {
    return {
      action: { type: "DeleteBackupJob" },
      conditions: deleting(`stopping the backup Job before deleting ${location}`),
      requeueAfter: BACKUP_REQUEUE.waiting
    };
  }
  if (input.usedBy !== void 0) {
    const message = `${location} is not deleted while ${input.usedBy} uses it; it is deleted once that ends`;
    return {
      conditions: [{ type: "Progressing", status: "True", reason: "SnapshotInUse", message }],
      event: { type: "Normal", reason: "SnapshotInUse", message },
      requeueAfter: BACKUP_REQUEUE.waiting
    };
  }
  if (backup.spec.destination.s3 !== void 0) {
    return { action: { type: "DeleteObject" }, conditions: deleting(`deleting ${location}`) };
  }
  if (claim === void 0 || claim.deleting === true) {
    const claimName = backup.spec.destination.pvc?.claimName ?? "";
    return {
      action: { type: "RemoveFinalizer" },
      conditions: [],
      event: {
        type: "Normal",
        reason: "ClaimGone",
        message: `PersistentVolumeClaim ${claimName} is ${claim === void 0 ? "gone" : "being deleted"}: the snapshot goes with its volume`
      }
    };
  }
  if (deleteJob2 === void 0) {
    return {
      action: { type: "CreateDeleteJob" },
      conditions: deleting(`a Job removes ${location}`),
      requeueAfter: BACKUP_REQUEUE.waiting
    };
  }
  if (deleteJob2.succeeded) {
    return {
      action: { type: "RemoveFinalizer" },
      conditions: [],
      event: { type: "Normal", reason: "SnapshotDeleted", message: `deleted ${location}` }
    };
  }
  if (deleteJob2.failed !== void 0) {
    return {
      ...stuck(
        "SnapshotDeleteFailed",
        `the Job removing ${location} failed (${deleteJob2.failed.reason}): ${deleteJob2.failed.message}; it is retried`
      ),
      action: { type: "RetryDeleteJob" }
    };
  }
  return { conditions: deleting(`a Job removes ${location}`), requeueAfter: BACKUP_REQUEUE.waiting };
}
function planDeletionFailure(backup, reason, why) {
  return stuck(reason, `deleting ${backupLocation(backup)} failed: ${why}; it is retried`);
}
function planObjectDeleted(backup) {
  return {
    action: { type: "RemoveFinalizer" },
    conditions: [],
    event: { type: "Normal", reason: "SnapshotDeleted", message: `deleted ${backupLocation(backup)}` }
  };
}

// src/plan/backup-use.ts
function backupsInUse(restores, clusters) {
  const used = /* @__PURE__ */ new Map();
  for (const r of restores) {
    const backup = r.spec.source?.backup?.name;
    const phase = r.status?.phase;
    if (backup === void 0 || phase === "Succeeded" || phase === "Failed") continue;
    if (!used.has(backup)) used.set(backup, `EtcdRestore ${r.metadata.name} (${phase ?? "not started"})`);
  }
  for (const c of clusters) {
    const backup = c.spec.bootstrap?.restore?.backup?.name;
    if (backup === void 0 || c.status?.restore?.completionTime !== void 0) continue;
    if (!used.has(backup)) {
      used.set(backup, `EtcdCluster ${c.metadata.name}'s spec.bootstrap.restore (not restored yet)`);
    }
  }
  return used;
}

// src/reconcile/backup-use.ts
async function observeBackupsInUse(cache, namespace) {
  const [restores, clusters] = await Promise.all([
    cache.list(EtcdRestoreKind, { namespace }),
    cache.list(EtcdClusterKind, { namespace })
  ]);
  return backupsInUse(restores, clusters);
}

// src/reconcile/cluster/auth.ts
import { randomBytes } from "node:crypto";

// src/plan/auth.ts
function authFailure(observed) {
  const failure = observed.auth?.failure;
  if (failure === void 0) return void 0;
  const why = failure.reason === "WrongPassword" ? "etcd rejects the root password of the root Secret" : "etcd has authentication on and the operator has no root password";
  return {
    type: "Degraded",
    reason: "AuthFailed",
    field: "spec.auth.rootSecretRef",
    message: `spec.auth.rootSecretRef: ${why} (${failure.message}); a cluster restored from a backup of an auth-enabled cluster keeps that cluster's users: name its root Secret (key password) in spec.auth.rootSecretRef`
  };
}
function planAuth(spec, auth) {
  if (spec.auth === void 0) return void 0;
  if (auth?.enabled === void 0) {
    return { type: "Wait", reason: "AuthUnknown", message: "etcd did not say whether authentication is on" };
  }
  if (spec.auth.enabled && !auth.enabled) {
    if (auth.rootUser === void 0 || auth.rootRole === void 0) {
      return { type: "Wait", reason: "AuthUnknown", message: "etcd did not answer about its user root" };
    }
    if (!auth.rootUser) {
      return { type: "AddRootUser", message: "adding etcd user root (the root Secret's password)" };
    }
    if (!auth.rootRole) return { type: "GrantRootRole", message: "granting role root to etcd user root" };
    return {
      type: "EnableAuth",
      message: "enabling etcd authentication (user root, password from the root Secret)"
    };
  }
  if (!spec.auth.enabled && auth.enabled) {
    return { type: "DisableAuth", message: "disabling etcd authentication (spec.auth.enabled is false)" };
  }
  return void 0;
}
function missingRootSecret(o) {
  if (!o.enabled) return void 0;
  if (!o.named && o.etcdAuth !== "Enabled") return { type: "Create" };
  const message = o.named ? `${o.field}: Secret ${o.secret} not found; create it with key password (the etcd root user's password)` : `${o.field}: Secret ${o.secret}, made by the operator, not found while etcd has authentication on (status.auth: Enabled): no new root password is made (etcd keeps the old one and would refuse it); restore the Secret (key password) from your backup, or reset the root password with etcdctl and put it there (docs/operators/etcd.md, "The root Secret is lost")`;
  return { type: "Degraded", reason: "RootSecretMissing", field: o.field, message };
}

// src/reconcile/cluster/tls-types.ts
function secretData(secret) {
  const out = {};
  for (const [k2, v2] of Object.entries(secret?.data ?? {})) out[k2] = Buffer.from(v2, "base64").toString("utf8");
  for (const [k2, v2] of Object.entries(secret?.stringData ?? {})) out[k2] = v2;
  return out;
}
function shortFingerprint(pem) {
  return certificateInfo(pem)?.fingerprint.slice(0, 16) ?? "";
}

// src/reconcile/cluster/auth.ts
async function prepareAuth(client, cluster, options) {
  if (cluster.spec.auth === void 0) return {};
  const { namespace } = clusterRef(cluster);
  const name = rootSecretName(cluster);
  const field = rootSecretField(cluster);
  const enabled = cluster.spec.auth?.enabled === true;
  const read = () => client.get(Secret, name, namespace, options.signal).catch((err) => {
    if (isNotFound(err)) return void 0;
    throw err;
  });
  let secret = await read();
  let created;
  const missing = secret === void 0 ? missingRootSecret({
    enabled,
    named: cluster.spec.auth?.rootSecretRef !== void 0,
    ...cluster.status?.auth === void 0 ? {} : { etcdAuth: cluster.status.auth },
    secret: `${namespace}/${name}`,
    field
  }) : void 0;
  if (missing?.type === "Create" && options.create) {
    const password2 = randomBytes(24).toString("base64url");
    try {
      await client.create(
        Secret,
        rootSecret(cluster, password2),
        options.signal === void 0 ? {} : { signal: options.signal }
      );
      created = `created Secret ${namespace}/${name} with a random root password (kept when the EtcdCluster is deleted)`;
    } catch (err) {
      if (!isAlreadyExists(err)) throw err;
    }
    secret = await read();
  }
  if (secret === void 0) {
    if (missing?.type === "Degraded") {
      const { reason, message } = missing;
      return { problem: { reason, field, message } };
    }
    if (!enabled) return {};
    return {
      problem: {
        reason: "RootSecretMissing",
        field,
        message: `${field}: Secret ${namespace}/${name} not found; create it with key ${ROOT_PASSWORD_KEY} (the etcd root user's password)`
      }
    };
  }
  const password = secretData(secret)[ROOT_PASSWORD_KEY] ?? "";
  if (password === "") {
    if (!enabled) return {};
    return {
      problem: {
        reason: "RootSecretInvalid",
        field,
        message: `${field}: Secret ${namespace}/${name} has no key ${ROOT_PASSWORD_KEY} (or it is empty); put the etcd root user's password there`
      }
    };
  }
  return {
    credentials: { username: ROOT_USER, password },
    ...created === void 0 ? {} : { created }
  };
}
async function observeAuth(cluster, etcd, signal) {
  const call = signal === void 0 ? {} : { signal };
  const status = await etcd.authStatus(call).catch(() => void 0);
  if (status === void 0) return {};
  if (status.enabled || cluster.spec.auth?.enabled !== true) return { enabled: status.enabled };
  const roles = await etcd.userRoles(ROOT_USER, call).catch(() => null);
  if (roles === null) return { enabled: false };
  return { enabled: false, rootUser: roles !== void 0, rootRole: roles?.includes("root") === true };
}
async function actAuth(step2, etcd, credentials, signal) {
  const call = signal === void 0 ? {} : { signal };
  if (credentials === void 0) {
    return {
      done: false,
      reason: "NoRootPassword",
      message: `${step2.message}: the root password is not known`
    };
  }
  switch (step2.type) {
    case "AddRootUser":
      await etcd.userAdd(ROOT_USER, credentials.password, call).catch((err) => {
        if (!(err instanceof Error && err.message.includes("user name already exists"))) throw err;
      });
      break;
    case "GrantRootRole":
      await etcd.userGrantRole(ROOT_USER, "root", call);
      break;
    case "EnableAuth":
      await etcd.userChangePassword(ROOT_USER, credentials.password, call);
      await etcd.authEnable(call);
      break;
    case "DisableAuth":
      await etcd.authDisable(call);
      break;
  }
  return { done: true };
}

// src/etcd/etcd-client.ts
var import_undici2 = __toESM(require_undici(), 1);
import { createHash as createHash2 } from "node:crypto";

// src/etcd/etcd-errors.ts
var EtcdError = class extends Error {
  /** The endpoints that were tried. */
  endpoints;
  /** etcd's error message, e.g. "etcdserver: Peer URLs already exists" (absent for a transport error). */
  etcdMessage;
  /** gRPC status code etcd returned (absent for a transport error). */
  code;
  constructor(message, endpoints, etcdMessage, code) {
    super(message);
    this.name = "EtcdError";
    this.endpoints = endpoints;
    this.etcdMessage = etcdMessage;
    this.code = code;
  }
};
var EtcdAuthError = class extends EtcdError {
  reason;
  constructor(reason, message, endpoints, etcdMessage, code) {
    super(message, endpoints, etcdMessage, code);
    this.name = "EtcdAuthError";
    this.reason = reason;
  }
};
var GRPC_INVALID_ARGUMENT = 3;
var GRPC_FAILED_PRECONDITION = 9;
var GRPC_UNAUTHENTICATED = 16;
function needsToken(code, message) {
  if (code === GRPC_UNAUTHENTICATED) return true;
  return code === GRPC_INVALID_ARGUMENT && (message.includes("user name is empty") || message.includes("auth store is old"));
}
function connectionRefused(err) {
  const e = err;
  return e.code === "ECONNREFUSED" || e.cause?.code === "ECONNREFUSED";
}
var GRPC_UNAVAILABLE = 14;
function describe(err) {
  if (err instanceof Error) {
    if (err.name === "TimeoutError") return "timed out";
    const code = err.code;
    return typeof code === "string" && !err.message.includes(code) ? `${code} ${err.message}` : err.message;
  }
  return String(err);
}

// src/etcd/etcd-messages.ts
var ALARM_TYPES = ["NONE", "NOSPACE", "CORRUPT"];
function memberIdToHex(id) {
  return BigInt(id).toString(16);
}
function parseJson(text) {
  try {
    const v2 = JSON.parse(text);
    if (typeof v2 === "object" && v2 !== null) return v2;
  } catch {
  }
  return { message: text.trim() };
}
function b64(s) {
  return Buffer.from(s, "utf8").toString("base64");
}
function str(v2, fallback) {
  return typeof v2 === "string" ? v2 : fallback;
}
function numOrUndefined(v2) {
  return typeof v2 === "number" ? v2 : void 0;
}
function num(v2, fallback = 0) {
  if (typeof v2 === "number") return v2;
  if (typeof v2 === "string" && v2 !== "") return Number(v2);
  return fallback;
}
function parseHeader(v2) {
  const h = v2 ?? {};
  return {
    clusterId: str(h.cluster_id, "0"),
    memberId: str(h.member_id, "0"),
    revision: num(h.revision),
    raftTerm: num(h.raft_term)
  };
}
function parseAlarms(v2) {
  if (!Array.isArray(v2)) return [];
  return v2.filter((a) => typeof a === "object" && a !== null).map((a) => ({
    memberId: typeof a.memberID === "number" ? String(a.memberID) : str(a.memberID, "0"),
    alarm: typeof a.alarm === "number" ? ALARM_TYPES[a.alarm] ?? String(a.alarm) : str(a.alarm, "NONE")
  })).filter((a) => a.alarm !== "NONE");
}
function parseMembers(v2) {
  if (!Array.isArray(v2)) return [];
  return v2.filter((m) => typeof m === "object" && m !== null).map((m) => ({
    id: str(m.ID, "0"),
    name: str(m.name, ""),
    peerURLs: Array.isArray(m.peerURLs) ? m.peerURLs.map(String) : [],
    clientURLs: Array.isArray(m.clientURLs) ? m.clientURLs.map(String) : [],
    isLearner: m.isLearner === true
  }));
}

// src/etcd/etcd-tls-agent.ts
var import_undici = __toESM(require_undici(), 1);
import { createHash } from "node:crypto";
var agents = /* @__PURE__ */ new Map();
var MAX_AGENTS = 64;
function tlsAgent(tls) {
  const id = createHash("sha256").update(tls.ca).update("\0").update(tls.cert).update("\0").update(tls.key).digest("hex");
  const existing = agents.get(id);
  if (existing !== void 0) return existing;
  const agent = new import_undici.Agent({
    connect: {
      ca: tls.ca,
      cert: tls.cert,
      key: tls.key,
      rejectUnauthorized: true,
      checkServerIdentity: () => void 0
    }
  });
  agents.set(id, agent);
  if (agents.size > MAX_AGENTS) {
    const [oldest] = agents;
    if (oldest !== void 0) {
      agents.delete(oldest[0]);
      void oldest[1].close();
    }
  }
  return agent;
}

// src/etcd/etcd-client.ts
var DEFAULT_ETCD_TIMEOUT_MS = 5e3;
var tokens = /* @__PURE__ */ new Map();
var MAX_TOKENS = 256;
var MUTATES = true;
var EtcdClient = class {
  /** The client URLs, in the order they are tried. */
  endpoints;
  #timeoutMs;
  #dispatcher;
  #auth;
  /** Key of this client's token in the shared cache (undefined without auth). */
  #tokenKey;
  constructor(options) {
    if (options.endpoints.length === 0) throw new Error("EtcdClient needs at least one endpoint");
    this.endpoints = options.endpoints.map((e) => e.replace(/\/+$/, ""));
    this.#timeoutMs = options.timeoutMs ?? DEFAULT_ETCD_TIMEOUT_MS;
    this.#dispatcher = options.tls === void 0 ? void 0 : tlsAgent(options.tls);
    this.#auth = options.auth;
    this.#tokenKey = options.auth === void 0 ? void 0 : createHash2("sha256").update(options.auth.username).update("\0").update(options.auth.password).update("\0").update([...this.endpoints].sort().join(",")).digest("hex");
  }
  /** True when the client was given credentials. */
  get authenticates() {
    return this.#auth !== void 0;
  }
  /** undici options shared by every request: the TLS agent, when there is one. */
  #via() {
    return this.#dispatcher === void 0 ? {} : { dispatcher: this.#dispatcher };
  }
  /**
   * Lists the cluster's members. `linearizable` reads through a quorum instead of the answering member's view
   * (etcd 3.6; older servers reject the field, so it is sent only when true).
   */
  async memberList(options = {}) {
    const body = options.linearizable === true ? { linearizable: true } : {};
    const res = await this.#call("member list", "/v3/cluster/member/list", body, options);
    return { header: parseHeader(res.header), members: parseMembers(res.members) };
  }
  /** Adds a learner (non-voting member) with these peer URLs; returns it (its name is "" until it starts). */
  async memberAddAsLearner(peerURLs, options = {}) {
    const res = await this.#call(
      `member add learner ${peerURLs.join(",")}`,
      "/v3/cluster/member/add",
      { peerURLs, isLearner: true },
      options,
      this.endpoints,
      MUTATES
    );
    const [member] = parseMembers([res.member]);
    if (member === void 0) throw new EtcdError("member add: etcd returned no member", this.endpoints);
    return member;
  }
  /** Promotes a learner that has caught up with the leader to a voting member. */
  async memberPromote(id, options = {}) {
    await this.#call(
      `member promote ${id}`,
      "/v3/cluster/member/promote",
      { ID: id },
      options,
      this.endpoints,
      MUTATES
    );
  }
  /** Removes a member from the cluster (its process stops on its own once it learns it). */
  async memberRemove(id, options = {}) {
    await this.#call(
      `member remove ${id}`,
      "/v3/cluster/member/remove",
      { ID: id },
      options,
      this.endpoints,
      MUTATES
    );
  }
  /** Moves leadership to a voting member. The request is sent to the current leader, found by asking each endpoint. */
  async moveLeader(targetId, options = {}) {
    const leader = await this.#leaderEndpoint(options);
    await this.#call(
      `move leader to ${targetId}`,
      "/v3/maintenance/transfer-leadership",
      { targetID: targetId },
      options,
      [leader]
    );
  }
  /** The alarms raised in the cluster (empty when none). */
  async alarmList(options = {}) {
    const res = await this.#call("alarm list", "/v3/maintenance/alarm", { action: "GET" }, options);
    return parseAlarms(res.alarms);
  }
  /** Disarms `alarm` raised by member `memberId` (decimal); returns the alarms that were disarmed. */
  async alarmDisarm(memberId, alarm, options = {}) {
    const res = await this.#call(
      `alarm disarm ${alarm} of ${memberId}`,
      "/v3/maintenance/alarm",
      { action: "DEACTIVATE", memberID: memberId, alarm },
      options
    );
    return parseAlarms(res.alarms);
  }
  /** Compacts the key-value history up to `revision` (physical: returns once the compaction is applied). */
  async compact(revision, options = {}) {
    await this.#call(`compact to ${revision}`, "/v3/kv/compaction", { revision, physical: true }, options);
  }
  /**
   * Defragments the database of the member at `endpoint` (only that member: it blocks reads and writes while it
   * rewrites its file, so callers do one member at a time).
   */
  async defragment(endpoint, options = {}) {
    const url = trimUrl(endpoint);
    await this.#call("defragment", "/v3/maintenance/defragment", {}, options, [url]);
  }
  /** Status of the member at `endpoint`. */
  async status(endpoint, options = {}) {
    const url = trimUrl(endpoint);
    const res = await this.#call("status", "/v3/maintenance/status", {}, options, [url]);
    const header = parseHeader(res.header);
    return {
      endpoint: url,
      header,
      memberId: header.memberId,
      leader: str(res.leader, "0"),
      version: str(res.version, ""),
      dbSize: num(res.dbSize),
      dbSizeInUse: num(res.dbSizeInUse),
      raftIndex: num(res.raftIndex),
      raftTerm: num(res.raftTerm),
      raftAppliedIndex: num(res.raftAppliedIndex),
      isLearner: res.isLearner === true,
      errors: Array.isArray(res.errors) ? res.errors.map(String) : []
    };
  }
  /**
   * Whether authentication is on. Without auth etcd answers anyone; with it on only root may ask (a client without
   * credentials gets an EtcdAuthError "NoCredentials", which also says auth is on).
   */
  async authStatus(options = {}) {
    const res = await this.#call("auth status", "/v3/auth/status", {}, options);
    return { enabled: res.enabled === true, authRevision: num(res.authRevision) };
  }
  /** Adds user `name` with `password` (etcd answers "user name already exists" when it does). */
  async userAdd(name, password, options = {}) {
    await this.#call(`user add ${name}`, "/v3/auth/user/add", { name, password }, options);
  }
  /** Sets user `name`'s password. */
  async userChangePassword(name, password, options = {}) {
    await this.#call(`change password of ${name}`, "/v3/auth/user/changepw", { name, password }, options);
  }
  /** The roles of user `name`, or undefined when there is no such user. */
  async userRoles(name, options = {}) {
    try {
      const res = await this.#call(`user get ${name}`, "/v3/auth/user/get", { name }, options);
      return Array.isArray(res.roles) ? res.roles.map(String) : [];
    } catch (err) {
      if (err instanceof EtcdError && err.etcdMessage?.includes("user name not found")) return void 0;
      throw err;
    }
  }
  /** Grants `role` to user `user` (repeating it is harmless). */
  async userGrantRole(user, role, options = {}) {
    await this.#call(`grant role ${role} to ${user}`, "/v3/auth/user/grant", { user, role }, options);
  }
  /** Turns authentication on (etcd refuses it while there is no user root with role root). */
  async authEnable(options = {}) {
    await this.#call("auth enable", "/v3/auth/enable", {}, options);
  }
  /** Turns authentication off (only root may). */
  async authDisable(options = {}) {
    await this.#call("auth disable", "/v3/auth/disable", {}, options);
  }
  /** Health of the member at `endpoint` (GET /readyz). Never throws for an unhealthy or unreachable member. */
  async health(endpoint, options = {}) {
    const url = trimUrl(endpoint);
    try {
      const res = await (0, import_undici2.request)(`${url}/readyz`, {
        method: "GET",
        signal: this.#signal(options),
        ...this.#via()
      });
      const text = (await res.body.text()).trim();
      if (res.statusCode === 200) return { endpoint: url, healthy: true };
      return { endpoint: url, healthy: false, reason: `HTTP ${res.statusCode}: ${text}` };
    } catch (err) {
      options.signal?.throwIfAborted();
      return { endpoint: url, healthy: false, reason: describe(err) };
    }
  }
  /** Writes a key (UTF-8 key and value); returns the revision of the write. */
  async put(key, value, options = {}) {
    const res = await this.#call(`put ${key}`, "/v3/kv/put", { key: b64(key), value: b64(value) }, options);
    return { revision: parseHeader(res.header).revision };
  }
  /** Reads a key (linearizable); undefined when it does not exist. */
  async get(key, options = {}) {
    const res = await this.#call(`get ${key}`, "/v3/kv/range", { key: b64(key) }, options);
    const kv = Array.isArray(res.kvs) ? res.kvs[0] : void 0;
    return kv === void 0 ? void 0 : Buffer.from(str(kv.value, ""), "base64").toString("utf8");
  }
  /** Hash of the key-value store of the member at `endpoint` up to `revision` (0: its latest). */
  async hashKV(endpoint, revision = 0, options = {}) {
    const url = trimUrl(endpoint);
    const res = await this.#call(
      `hashKV at revision ${revision}`,
      "/v3/maintenance/hashkv",
      { revision },
      options,
      [url]
    );
    return {
      endpoint: url,
      memberId: parseHeader(res.header).memberId,
      hash: num(res.hash),
      hashRevision: num(res.hash_revision),
      compactRevision: num(res.compact_revision, -1)
    };
  }
  /** The endpoint of the current leader: one of ours whose member is the leader, else the leader's client URL. */
  async #leaderEndpoint(options) {
    let leader;
    const failures = [];
    for (const endpoint of this.endpoints) {
      try {
        const s = await this.status(endpoint, options);
        if (s.leader !== "0" && s.leader === s.memberId) return endpoint;
        if (s.leader !== "0") leader = s.leader;
      } catch (err) {
        options.signal?.throwIfAborted();
        failures.push(describe(err));
      }
    }
    if (leader === void 0) {
      const why = failures.length > 0 ? `: ${failures.join("; ")}` : "";
      throw new EtcdError(
        `no etcd endpoint knows a leader (${this.endpoints.join(", ")})${why}`,
        this.endpoints
      );
    }
    const { members } = await this.memberList(options);
    const url = members.find((m) => m.id === leader)?.clientURLs[0];
    if (url === void 0) {
      throw new EtcdError(`the etcd leader ${leader} has no client URL in the member list`, this.endpoints);
    }
    return trimUrl(url);
  }
  /**
   * POSTs `body` to `path`, trying `endpoints` in order; throws an EtcdError naming the endpoint(s). A call
   * that changes membership (`mutates`) moves to the next endpoint only when the connection was refused or
   * the member answered UNAVAILABLE: after a timeout or a dropped connection it may have been applied, and
   * repeating it elsewhere would fail misleadingly ("member not found") or act twice.
   */
  async #call(what, path, body, options, endpoints = this.endpoints, mutates = false) {
    const failures = [];
    for (const endpoint of endpoints) {
      let res;
      let statusCode;
      try {
        ({ statusCode, res } = await this.#post(endpoint, path, body, options));
        if (statusCode !== 200 && needsToken(numOrUndefined(res.code), str(res.message, ""))) {
          const token = await this.#authenticate(endpoint, what, res, options);
          ({ statusCode, res } = await this.#post(endpoint, path, body, options, token));
        }
      } catch (err) {
        if (err instanceof EtcdAuthError) throw err;
        options.signal?.throwIfAborted();
        if (mutates && !connectionRefused(err)) {
          throw new EtcdError(
            `etcd ${endpoint}: ${what}: ${describe(err)} (not retried elsewhere: it may have been applied)`,
            [endpoint]
          );
        }
        failures.push(`${endpoint}: ${describe(err)}`);
        continue;
      }
      if (statusCode === 200) return res;
      const message = str(res.message, str(res.error, `HTTP ${statusCode}`));
      const code = typeof res.code === "number" ? res.code : void 0;
      if (code === GRPC_UNAVAILABLE && endpoints.length > 1) {
        failures.push(`${endpoint}: ${message}`);
        continue;
      }
      throw new EtcdError(`etcd ${endpoint}: ${what}: ${message}`, [endpoint], message, code);
    }
    const tried = endpoints.join(", ");
    throw new EtcdError(`${what}: no etcd endpoint answered (${tried}): ${failures.join("; ")}`, endpoints);
  }
  /** One POST to one endpoint, with the cached token (or `token`) when the client authenticates. */
  async #post(endpoint, path, body, options, token = this.#tokenKey === void 0 ? void 0 : tokens.get(this.#tokenKey)) {
    const r = await (0, import_undici2.request)(`${endpoint}${path}`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        ...token === void 0 || token === "" ? {} : { authorization: token }
      },
      body: JSON.stringify(body),
      signal: this.#signal(options),
      ...this.#via()
    });
    return { statusCode: r.statusCode, res: parseJson(await r.body.text()) };
  }
  /**
   * Gets a token from `endpoint` after it refused `what` with `refusal`, and caches it. Throws an EtcdAuthError
   * when the client has no credentials or etcd rejects them; the message never carries the password.
   */
  async #authenticate(endpoint, what, refusal, options) {
    const refused = str(refusal.message, "authentication required");
    const code = numOrUndefined(refusal.code);
    if (this.#auth === void 0 || this.#tokenKey === void 0) {
      throw new EtcdAuthError(
        "NoCredentials",
        `etcd ${endpoint}: ${what}: ${refused} (authentication is on and the operator has no credentials)`,
        [endpoint],
        refused,
        code
      );
    }
    tokens.delete(this.#tokenKey);
    const { username, password } = this.#auth;
    const { statusCode, res } = await this.#post(
      endpoint,
      "/v3/auth/authenticate",
      { name: username, password },
      options,
      void 0
    );
    const token = str(res.token, "");
    if (statusCode === 200 && token !== "") {
      tokens.set(this.#tokenKey, token);
      if (tokens.size > MAX_TOKENS) {
        const [oldest] = tokens.keys();
        if (oldest !== void 0) tokens.delete(oldest);
      }
      return token;
    }
    const message = str(res.message, `HTTP ${statusCode}`);
    const resCode = numOrUndefined(res.code);
    if (resCode === GRPC_FAILED_PRECONDITION && message.includes("not enabled")) {
      return "";
    }
    throw new EtcdAuthError(
      message.includes("authentication failed") ? "WrongPassword" : "NoCredentials",
      `etcd ${endpoint}: authenticate as ${username}: ${message}`,
      [endpoint],
      message,
      resCode
    );
  }
  #signal(options) {
    const timeout = AbortSignal.timeout(options.timeoutMs ?? this.#timeoutMs);
    return options.signal === void 0 ? timeout : AbortSignal.any([options.signal, timeout]);
  }
};
function trimUrl(url) {
  return url.replace(/\/+$/, "");
}

// src/plan/quorum-evidence.ts
var AUTH = [
  "permission denied",
  "authentication failed",
  "invalid auth token",
  "user name is empty",
  "auth store is old",
  "authentication is on and the operator has no credentials",
  "user name not found",
  "invalid auth management"
];
var TLS = [
  "certificate",
  "unable to verify",
  "self-signed",
  "self signed",
  "unknown ca",
  "handshake",
  "err_tls",
  "err_ssl",
  "ssl alert",
  "ssl routines",
  "wrong version number",
  "altname",
  "client sent an http request to an https server"
];
var NETWORK = [
  "econnrefused",
  "etimedout",
  "ehostunreach",
  "enetunreach",
  "enotfound",
  "eai_again",
  "econnreset",
  "epipe",
  "timed out",
  "timeout",
  "other side closed",
  "socket hang up",
  "und_err_socket",
  "no member pod has an ip address"
];
function classifyEtcdFailure(message) {
  const text = message.toLowerCase();
  if (AUTH.some((s) => text.includes(s))) return "auth";
  if (TLS.some((s) => text.includes(s))) return "tls";
  if (NETWORK.some((s) => text.includes(s))) return "network";
  return text.includes("etcdserver") || /http \d{3}/.test(text) ? "etcd" : "network";
}
function readyByKubelet(pod) {
  return pod?.ready === true && pod.running !== false;
}
function voters(observed) {
  const { etcd } = observed;
  if (etcd.reachable) return etcd.members.filter((m) => !m.isLearner).map((m) => m.name);
  if ((observed.knownVoters ?? []).length > 0) return [...observed.knownVoters ?? []];
  if ((observed.knownMembers ?? []).length > 0) return [...observed.knownMembers ?? []];
  return [.../* @__PURE__ */ new Set([...observed.pods.map((p) => p.name), ...observed.volumes])];
}
var STRENGTH = { auth: 3, tls: 2, network: 1, etcd: 0 };
function operatorFailure(observed) {
  const { etcd } = observed;
  if (!etcd.reachable) {
    const kind2 = observed.auth?.failure !== void 0 ? "auth" : etcd.failure ?? classifyEtcdFailure(etcd.error);
    return { kind: kind2, text: etcd.error };
  }
  const failures = etcd.members.filter((m) => !m.isLearner && !m.healthy && m.healthError !== void 0).map((m) => ({
    kind: m.healthFailure ?? classifyEtcdFailure(m.healthError),
    text: `${m.name}: ${m.healthError}`
  }));
  if (failures.length === 0) return void 0;
  const kind = failures.map((f2) => f2.kind).sort((a, b2) => STRENGTH[b2] - STRENGTH[a])[0];
  return { kind, text: failures.map((f2) => f2.text).join("; ") };
}
function judgeQuorum(observed) {
  const { etcd } = observed;
  const names2 = voters(observed);
  if (etcd.reachable) {
    const healthy = etcd.members.filter((m) => !m.isLearner && m.healthy).length;
    if (names2.length > 0 && healthy >= quorum(names2.length)) return { state: "Healthy" };
  }
  const pods = new Map(observed.pods.map((p) => [p.name, p]));
  const ready = names2.filter((n) => readyByKubelet(pods.get(n))).sort();
  const needed = quorum(names2.length);
  const kubelet = `${ready.length} of ${names2.length} voting members' pods are Ready by their kubelet probes${ready.length === 0 ? "" : ` (${ready.join(", ")})`}, a quorum needs ${needed}`;
  const failure = operatorFailure(observed);
  const seen = etcd.reachable ? `${etcd.members.filter((m) => !m.isLearner && m.healthy).length} of ${names2.length} voting members answer the operator's health checks${failure === void 0 ? "" : ` (${failure.text})`}` : `no etcd member answers the operator (${etcd.error})`;
  const noRecovery = "no recovery is started and nothing is removed while the loss of quorum is not confirmed";
  if (failure?.kind === "auth") {
    return {
      state: "Unconfirmed",
      reason: "AuthFailed",
      field: "spec.auth.rootSecretRef",
      message: `etcd refuses the operator's credentials (${failure.text}); ${kubelet}: fix the root Secret (spec.auth.rootSecretRef, key password) to match etcd's root password; ${noRecovery}`
    };
  }
  if (failure?.kind === "tls") {
    return {
      state: "Unconfirmed",
      reason: "TLSFailed",
      field: "spec.tls",
      message: `the operator's TLS handshake with the members fails (${failure.text}); ${kubelet}: check that the members' certificates and the operator's client certificate come from the CA of spec.tls; ${noRecovery}`
    };
  }
  if (names2.length > 0 && ready.length >= needed) {
    return {
      state: "Unconfirmed",
      reason: "OperatorCutOff",
      message: `${seen}, but ${kubelet}: the members serve, the operator is cut off from them; check NetworkPolicies (the operator's pods must reach the client port 2379), DNS and the network of the operator's node; ${noRecovery}`
    };
  }
  return { state: "Lost", message: `${seen}; ${kubelet}` };
}
function quorumLost(observed) {
  const judged = judgeQuorum(observed);
  if (judged.state === "Unconfirmed") {
    const { reason, field, message } = judged;
    return { type: "Degraded", reason, ...field === void 0 ? {} : { field }, message };
  }
  const why = judged.state === "Lost" ? judged.message : "no quorum answers";
  return { type: "QuorumLost", message: `${why}; nothing is removed until a quorum is back` };
}
function quorum(n) {
  return Math.floor(n / 2) + 1;
}

// src/reconcile/cluster/observe.ts
var OBSERVE_TIMEOUT_MS = 3e3;
var defaultEtcdClient = (endpoints, tls, auth) => new EtcdClient({
  endpoints,
  timeoutMs: OBSERVE_TIMEOUT_MS,
  ...tls === void 0 ? {} : { tls },
  ...auth === void 0 ? {} : { auth }
});
function memberOf(obj) {
  return obj.metadata.labels?.[MEMBER_LABEL];
}
function podReady(pod) {
  return pod.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") === true;
}
function podGone(pod) {
  const phase = pod.status?.phase;
  return pod.metadata.deletionTimestamp !== void 0 || phase === "Failed" || phase === "Succeeded";
}
var IMAGE_PULL_REASONS = /* @__PURE__ */ new Set([
  "ErrImagePull",
  "ImagePullBackOff",
  "InvalidImageName",
  "ErrImageNeverPull"
]);
var DATA_LOST_MESSAGES = [
  "cannot fetch cluster info from peer urls",
  "Was the raft log corrupted, truncated, or lost?"
];
function observedPod(name, pod, templateHash, image) {
  const ready = podReady(pod);
  const cond = pod.status?.conditions?.find((c) => c.type === "Ready");
  const since = !ready && cond?.lastTransitionTime ? new Date(cond.lastTransitionTime) : void 0;
  const outdated = pod.metadata.annotations?.[POD_TEMPLATE_HASH_ANNOTATION] !== templateHash;
  const scheduled = pod.status?.conditions?.find((c) => c.type === "PodScheduled");
  const unschedulableSince = scheduled?.status === "False" && scheduled.reason === "Unschedulable" && scheduled.lastTransitionTime ? new Date(scheduled.lastTransitionTime) : void 0;
  const container = pod.status?.containerStatuses?.find((c) => c.name === "etcd");
  const waiting = container?.state?.waiting;
  const podImage = pod.spec?.containers.find((c) => c.name === "etcd")?.image ?? container?.image ?? "";
  const reported = container?.image;
  const neverRan = waiting?.reason === "CrashLoopBackOff" && reported !== void 0 && reported !== "" && reported !== podImage && !reported.endsWith(`/${podImage}`);
  const imagePullError = waiting?.reason !== void 0 && IMAGE_PULL_REASONS.has(waiting.reason) ? { image: podImage, reason: waiting.reason, current: podImage === image } : neverRan ? { image: podImage, reason: `CrashLoopBackOff, still on ${reported}`, current: podImage === image } : void 0;
  const messages = [
    container?.state?.terminated?.message,
    container?.state?.running === void 0 ? container?.lastState?.terminated?.message : void 0
  ];
  const dataLost = messages.some((m) => m !== void 0 && DATA_LOST_MESSAGES.some((d) => m.includes(d)));
  const running2 = container === void 0 ? void 0 : container.state?.running !== void 0;
  return {
    name,
    ready,
    ...running2 === void 0 ? {} : { running: running2 },
    ...since === void 0 ? {} : { notReadySince: since },
    ...outdated ? { outdated } : {},
    ...unschedulableSince === void 0 ? {} : { unschedulableSince },
    ...imagePullError === void 0 ? {} : { imagePullError },
    ...dataLost ? { dataLost } : {}
  };
}
async function observe(cluster, cache, etcdClient, signal, tls, auth) {
  const { namespace } = clusterRef(cluster);
  const uid = cluster.metadata.uid;
  const mine = (o) => o.metadata.ownerReferences?.some((r) => r.controller === true && r.uid === uid) === true;
  const ours = (c) => claimBelongsTo(cluster, c, CLAIM_UID_LABEL) && c.metadata.labels?.[KEPT_BY_RESTORE_LABEL] === void 0;
  const labels = selectorLabels(cluster);
  const pods = /* @__PURE__ */ new Map();
  for (const pod of await cache.list(Pod, { namespace, labels })) {
    const name = memberOf(pod);
    if (name !== void 0 && mine(pod)) pods.set(name, pod);
  }
  const claims = /* @__PURE__ */ new Map();
  for (const pvc of await cache.list(PersistentVolumeClaim, { namespace, labels })) {
    const name = memberOf(pvc);
    if (name !== void 0 && ours(pvc) && pvc.metadata.deletionTimestamp === void 0)
      claims.set(name, pvc);
  }
  const live = [...pods.entries()].filter(([, p]) => !podGone(p));
  const templateHash = podTemplateHash(cluster);
  const image = etcdImage(cluster);
  const observedPods = live.map(([name, pod]) => observedPod(name, pod, templateHash, image));
  const terminating = [...pods.entries()].filter(([, p]) => p.metadata.deletionTimestamp !== void 0).map(([name, p]) => ({ name, since: new Date(p.metadata.deletionTimestamp) }));
  const endpointOf = (pod) => pod.status?.podIP ? `${clientScheme(cluster)}://${pod.status.podIP}:${CLIENT_PORT}` : void 0;
  const endpoints = live.sort(([, a], [, b2]) => Number(podReady(b2)) - Number(podReady(a))).map(([, pod]) => endpointOf(pod)).filter((e) => e !== void 0);
  const base = {
    pods,
    claims,
    endpoints,
    members: [],
    memberStatus: []
  };
  const bootstrapped = cluster.status?.clusterID !== void 0;
  const volumes = [...claims.keys()];
  const seedVolumes = [...claims.entries()].filter(([, c]) => c.metadata.annotations?.[SEED_CLAIM_ANNOTATION] === "true").map(([name]) => name);
  const knownMembers = (cluster.status?.members ?? []).map((m) => m.name);
  const knownVoters = (cluster.status?.members ?? []).filter((m) => !m.learner).map((m) => m.name);
  const known = {
    ...cluster.status?.clusterID === void 0 ? {} : { knownClusterID: cluster.status.clusterID },
    ...cluster.status?.currentVersion === void 0 ? {} : { knownVersion: cluster.status.currentVersion },
    terminating
  };
  if (endpoints.length === 0) {
    return {
      ...base,
      observed: {
        etcd: { reachable: false, error: "no member pod has an IP address", failure: "network" },
        pods: observedPods,
        volumes,
        seedVolumes,
        bootstrapped,
        knownMembers,
        knownVoters,
        ...known
      }
    };
  }
  const client = etcdClient(endpoints, tls, auth);
  let list;
  try {
    list = await client.memberList(signal === void 0 ? {} : { signal });
  } catch (err) {
    signal?.throwIfAborted();
    const refused = err instanceof EtcdAuthError ? {
      auth: { enabled: true, failure: { reason: err.reason, message: err.etcdMessage ?? err.message } }
    } : {};
    const error = err instanceof Error ? err.message : String(err);
    const failure = err instanceof EtcdAuthError ? "auth" : classifyEtcdFailure(error);
    return {
      ...base,
      observed: {
        ...refused,
        etcd: { reachable: false, error, failure },
        pods: observedPods,
        volumes,
        seedVolumes,
        bootstrapped,
        knownMembers,
        knownVoters,
        ...known
      }
    };
  }
  const call = signal === void 0 ? {} : { signal };
  const alarmsRead = client.alarmList(call).catch(() => void 0);
  const probes = await Promise.all(
    list.members.map(async (m) => {
      const name = m.name || memberNameFromPeerURL(m.peerURLs[0] ?? "") || m.name;
      const pod = pods.get(name);
      const endpoint = pod === void 0 || podGone(pod) ? void 0 : endpointOf(pod);
      if (endpoint === void 0) return { m, name };
      const [status, health] = await Promise.all([
        client.status(endpoint, call).catch(() => void 0),
        m.isLearner ? Promise.resolve(void 0) : client.health(endpoint, call)
      ]);
      return { m, name, status, health };
    })
  );
  const alarmList = await alarmsRead;
  const authState = cluster.spec.auth === void 0 ? void 0 : await observeAuth(cluster, client, signal);
  signal?.throwIfAborted();
  const leaderId = probes.find((p) => p.status !== void 0 && p.status.leader !== "0")?.status?.leader;
  const members = probes.map(({ m, name, status, health }) => ({
    id: memberIdToHex(m.id),
    name,
    peerURLs: m.peerURLs,
    isLearner: m.isLearner,
    started: m.name !== "",
    // A learner cannot serve /readyz's linearizable read; it is healthy when it answers its status.
    healthy: m.isLearner ? status !== void 0 : health?.healthy === true,
    ...m.isLearner || health === void 0 || health.healthy ? {} : {
      healthError: health.reason ?? "unhealthy",
      healthFailure: classifyEtcdFailure(health.reason ?? "")
    },
    leader: leaderId !== void 0 && m.id === leaderId,
    ...status?.version ? { version: status.version } : {},
    ...status === void 0 ? {} : {
      raftIndex: status.raftIndex,
      clusterID: memberIdToHex(status.header.clusterId),
      dbSize: status.dbSize,
      dbSizeInUse: status.dbSizeInUse
    }
  }));
  const now = /* @__PURE__ */ new Date();
  const previous = new Map((cluster.status?.members ?? []).map((m) => [m.name, m]));
  const learnerProgress = {};
  const progressOf = (m) => {
    if (!m.isLearner) return {};
    const before = previous.get(m.name);
    const advanced = m.raftIndex !== void 0 && (before?.raftIndex === void 0 || m.raftIndex > before.raftIndex);
    const progressTime = advanced || before?.progressTime === void 0 ? now.toISOString() : before.progressTime;
    learnerProgress[m.name] = new Date(progressTime);
    const raftIndex = advanced ? m.raftIndex : before?.raftIndex;
    return { ...raftIndex === void 0 ? {} : { raftIndex }, progressTime };
  };
  const memberStatus = members.map((m, i3) => ({
    name: m.name,
    id: m.id,
    peerURL: m.peerURLs[0] ?? "",
    clientURLs: list.members[i3]?.clientURLs ?? [],
    ...m.version === void 0 ? {} : { version: m.version },
    healthy: m.healthy,
    learner: m.isLearner,
    leader: m.leader,
    ...progressOf(m)
  })).sort((a, b2) => a.name < b2.name ? -1 : a.name > b2.name ? 1 : 0);
  const nameOfId = new Map(members.map((m) => [m.id, m.name]));
  const alarms2 = alarmList?.map((a) => {
    const id = memberIdToHex(a.memberId);
    return { member: nameOfId.get(id) ?? id, alarm: a.alarm };
  });
  const clusterID = memberIdToHex(list.header.clusterId);
  return {
    ...base,
    members: list.members,
    memberStatus,
    clusterID,
    observed: {
      etcd: { reachable: true, members, clusterID, ...alarms2 === void 0 ? {} : { alarms: alarms2 } },
      pods: observedPods,
      volumes,
      seedVolumes,
      bootstrapped,
      knownMembers,
      knownVoters,
      learnerProgress,
      ...authState === void 0 ? {} : { auth: authState },
      ...known
    }
  };
}

// src/desired/cert-manager.ts
import { isIP } from "node:net";
var CertificateKind = defineKind({
  group: "cert-manager.io",
  version: "v1",
  kind: "Certificate",
  plural: "certificates",
  namespaced: true
});
var MEMBER_CERTIFICATE_COMPONENT = "member-certificate";
var CLIENT_CERTIFICATE_COMPONENT = "client-certificate";
var NEW_MEMBER_LABEL = "etcd.capstan.dev/new-member";
function certManagerField(port) {
  return `spec.tls.${port}.certManager`;
}
var MEMBER_USAGES = ["digital signature", "key encipherment", "server auth", "client auth"];
var CLIENT_USAGES = ["digital signature", "key encipherment", "client auth"];
function certificate(cluster, source, cert, labels) {
  const allLabels = { ...clusterLabels(cluster), ...labels };
  const dnsNames = cert.hosts.filter((h) => isIP(h) === 0);
  const ipAddresses = cert.hosts.filter((h) => isIP(h) !== 0);
  const obj = {
    apiVersion: CertificateKind.apiVersion,
    kind: CertificateKind.kind,
    metadata: { name: cert.secretName, namespace: clusterRef(cluster).namespace, labels: allLabels },
    spec: {
      secretName: cert.secretName,
      issuerRef: { ...source.issuerRef },
      commonName: cert.commonName,
      ...dnsNames.length === 0 ? {} : { dnsNames },
      ...ipAddresses.length === 0 ? {} : { ipAddresses },
      usages: cert.usages,
      ...source.duration === void 0 ? {} : { duration: source.duration },
      ...source.renewBefore === void 0 ? {} : { renewBefore: source.renewBefore },
      // A new key at each renewal, of the kind the operator's own certificates have.
      privateKey: { algorithm: "ECDSA", size: 256, rotationPolicy: "Always" },
      // So the operator finds (and deletes with their member) the Secrets cert-manager writes.
      secretTemplate: { labels: allLabels }
    }
  };
  setControllerReference(cluster, EtcdClusterKind, obj);
  return obj;
}
function memberCertificates(cluster, member, fresh = false) {
  const peer = peerTLS(cluster);
  const client = clientTLS(cluster);
  const labels = {
    "app.kubernetes.io/component": MEMBER_CERTIFICATE_COMPONENT,
    [MEMBER_LABEL]: member,
    ...fresh ? { [NEW_MEMBER_LABEL]: "true" } : {}
  };
  const leaf = (secretName) => ({
    secretName,
    commonName: memberCommonName(cluster),
    hosts: memberHosts(cluster, member),
    usages: MEMBER_USAGES
  });
  const out = [];
  if (peer?.kind === "certManager") {
    out.push({
      field: certManagerField("peer"),
      certificate: certificate(cluster, peer, leaf(memberTLSSecretName(member)), labels)
    });
  }
  if (client?.kind === "certManager" && (peer?.kind !== "certManager" || separateClientCertificates(cluster))) {
    const secretName = peer?.kind === "certManager" ? memberClientTLSSecretName(member) : memberTLSSecretName(member);
    out.push({
      field: certManagerField("client"),
      certificate: certificate(cluster, client, leaf(secretName), labels)
    });
  }
  return out;
}
function clientCertificates(cluster) {
  const client = clientTLS(cluster);
  if (client?.kind !== "certManager") return [];
  const labels = { "app.kubernetes.io/component": CLIENT_CERTIFICATE_COMPONENT };
  return [
    [operatorClientSecretName(cluster), OPERATOR_CLIENT_CN],
    [backupClientSecretName(cluster), BACKUP_CLIENT_CN]
  ].map(([secretName = "", commonName = ""]) => ({
    field: certManagerField("client"),
    certificate: certificate(
      cluster,
      client,
      { secretName, commonName, hosts: [], usages: CLIENT_USAGES },
      labels
    )
  }));
}
function usesCertManager(cluster) {
  return peerTLS(cluster)?.kind === "certManager" || clientTLS(cluster)?.kind === "certManager";
}
function firstCertManagerField(cluster) {
  return certManagerField(peerTLS(cluster)?.kind === "certManager" ? "peer" : "client");
}

// src/desired/tls-rotation.ts
var ROTATE_CA_ANNOTATION = "etcd.capstan.dev/rotate-ca";
var ROTATED_FOR_ANNOTATION = "etcd.capstan.dev/ca-rotated-for";
var ROTATION_STARTED_ANNOTATION = "etcd.capstan.dev/ca-rotation-started";
var TRUSTED_CA_ANNOTATION = "etcd.capstan.dev/trusted-ca";
var NEXT_CA_CERT = "next.crt";
var NEXT_CA_KEY = "next.key";
function caRenewBeforeMs(leafValidityMs) {
  return Math.max(365 * 24 * 36e5, 2 * leafValidityMs);
}
function rotationRequested(input) {
  const asked = input.asked !== void 0 && input.asked !== "" && input.asked !== input.servedFor;
  const expiring = input.caNotAfter !== void 0 && input.caNotAfter.getTime() - input.now.getTime() < input.renewBeforeMs;
  return asked || expiring;
}
var sameSet = (a, b2) => a.length === b2.length && a.every((x2) => b2.includes(x2));
function planCARotation(input) {
  const { members, bundle } = input;
  const stale = members.filter((m) => !sameSet(m.trusts, bundle));
  if (stale.length > 0) {
    const notReady = members.filter((m) => !m.ready);
    if (notReady.length > 0) {
      return {
        type: "Wait",
        reason: "MembersNotReady",
        message: `not restarting a member for the new CA bundle while ${notReady.map((m) => m.name).join(", ")} is not ready`
      };
    }
    const [first] = [...stale].sort((a, b2) => a.name < b2.name ? -1 : a.name > b2.name ? 1 : 0);
    if (first !== void 0) {
      return {
        type: "RestartMember",
        name: first.name,
        message: `restarting ${first.name} so that etcd reads the new trusted CA bundle`
      };
    }
  }
  if (input.nextCA !== void 0) {
    if (input.signingCA !== input.nextCA) return { type: "SwitchSigningCA" };
    const old = members.find((m) => m.leafIssuer !== input.nextCA);
    if (old !== void 0) return { type: "ReissueLeaf", name: old.name };
    if (input.clientIssuers.some((c) => c !== input.nextCA)) {
      return {
        type: "Wait",
        reason: "ClientCertificatesPending",
        message: "waiting for the client certificates to be reissued by the new CA"
      };
    }
    if (bundle.some((ca) => ca !== input.nextCA)) return { type: "DropOldCA" };
    return { type: "None" };
  }
  if (input.requested) return { type: "CreateNextCA" };
  return { type: "None" };
}

// src/plan/view.ts
var DEFAULT_DEAD_AFTER_MS = 5 * 6e4;
var DEFAULT_UNSCHEDULABLE_AFTER_MS = 5 * 6e4;
var DEFAULT_TERMINATING_AFTER_MS = 5 * 6e4;
var DEFAULT_LEARNER_STALL_MS = 10 * 6e4;
var DEFAULT_DEFRAG_THRESHOLD_PERCENT = 50;
var DEFRAG_MIN_DB_BYTES = 64 * 1024 * 1024;
var LEARNER_READY_FRACTION = 0.9;
function quorum2(voters2) {
  return Math.floor(voters2 / 2) + 1;
}
var View = class {
  spec;
  observed;
  members;
  now;
  options;
  pods;
  /** Member pods being deleted, by name, with their deletionTimestamp. */
  terminating;
  constructor(spec, observed, members, now, options) {
    this.spec = spec;
    this.observed = observed;
    this.members = members;
    this.now = now;
    this.options = options;
    this.pods = new Map(observed.pods.map((p) => [p.name, p]));
    this.terminating = new Map((observed.terminating ?? []).map((p) => [p.name, p.since]));
  }
  /** A threshold from spec.recovery (seconds), else the default (milliseconds). */
  threshold(seconds, fallbackMs) {
    return seconds === void 0 ? fallbackMs : seconds * 1e3;
  }
  /** Healthy in etcd and its pod not being deleted: what quorum arithmetic counts on. */
  counts(m) {
    return m.healthy && !this.terminating.has(m.name);
  }
  /** The lowest etcd version a member reports, if any reports one. */
  lowestVersion() {
    const versions = this.members.map((m) => m.version === void 0 ? void 0 : parseEtcdVersion(m.version)).filter((v2) => v2 !== void 0).sort(compareEtcdVersions);
    return versions[0];
  }
  /** A started, answering learner whose raft index reached 90% of the leader's. */
  caughtUp(learner) {
    const leader = this.members.find((m) => m.leader);
    return learner.started && learner.healthy && leader?.raftIndex !== void 0 && learner.raftIndex !== void 0 && learner.raftIndex >= leader.raftIndex * LEARNER_READY_FRACTION;
  }
  /** Healthy in etcd and, when it has a pod, ready. */
  isWell(m) {
    return m.healthy && this.pods.get(m.name)?.ready === true;
  }
  /** `step` if removing `m` keeps a quorum of healthy voters; MoveLeader first if `m` leads; else Wait. */
  removal(m, step2) {
    if (!m.isLearner) {
      const voters2 = this.members.filter((v2) => !v2.isLearner);
      const votersAfter = voters2.length - 1;
      const healthyAfter = voters2.filter((v2) => this.counts(v2) && v2 !== m).length;
      if (votersAfter === 0) {
        return wait("LastMember", `not removing ${m.name}: it is the only voting member`);
      }
      if (healthyAfter < quorum2(votersAfter)) {
        return wait(
          "QuorumAtRisk",
          `not removing ${m.name}: ${healthyAfter} healthy of ${votersAfter} voters would remain, below a quorum of ${quorum2(votersAfter)}`
        );
      }
    }
    if (m.leader) return this.moveLeaderFrom(m, `before removing ${m.name}`) ?? step2;
    return step2;
  }
  /** MoveLeader from `leader` to a healthy voter (one on spec.version first, then by name), if there is one. */
  moveLeaderFrom(leader, why) {
    const target = parseEtcdVersion(this.spec.version);
    const onTarget = (m) => {
      const v2 = m.version === void 0 ? void 0 : parseEtcdVersion(m.version);
      return v2 !== void 0 && target !== void 0 && compareEtcdVersions(v2, target) === 0 ? 0 : 1;
    };
    const to = this.members.filter((m) => m !== leader && !m.isLearner && this.isWell(m)).sort((a, b2) => onTarget(a) - onTarget(b2) || byName(a, b2))[0];
    if (to === void 0) return void 0;
    return {
      type: "MoveLeader",
      from: leader.id,
      to: to.id,
      toName: to.name,
      message: `moving leadership from ${leader.name} to ${to.name} ${why}`
    };
  }
};
function wait(reason, message) {
  return { type: "Wait", reason, message };
}
function degraded2(reason, message) {
  return { type: "Degraded", reason, field: "spec.version", message };
}
function byName(a, b2) {
  return a.name < b2.name ? -1 : a.name > b2.name ? 1 : 0;
}
function names(members) {
  return members.map((m) => m.name).join(", ");
}

// src/plan/gates.ts
function ownedFlagOverride(spec) {
  const flag = Object.keys(spec.extraArgs ?? {}).find((k2) => OPERATOR_OWNED_FLAGS.includes(k2));
  if (flag !== void 0) {
    return {
      type: "Degraded",
      reason: "OperatorOwnedFlag",
      field: `spec.extraArgs.${flag}`,
      message: `spec.extraArgs.${flag}: --${flag} is set by the operator and cannot be overridden; remove it`
    };
  }
  const env = (spec.extraEnv ?? []).find((e) => OPERATOR_OWNED_FLAGS.some((f2) => flagEnvName(f2) === e.name));
  if (env !== void 0) {
    return {
      type: "Degraded",
      reason: "OperatorOwnedFlag",
      field: "spec.extraEnv",
      message: `spec.extraEnv: ${env.name} sets a flag the operator owns and cannot be overridden; remove it`
    };
  }
  return void 0;
}
function versionGate(spec, current) {
  const target = parseEtcdVersion(spec.version);
  if (target === void 0) {
    return degraded2("InvalidVersion", `spec.version "${spec.version}" is not MAJOR.MINOR.PATCH`);
  }
  const from = typeof current === "string" ? parseEtcdVersion(current) : current;
  const refused = from === void 0 ? void 0 : unsupportedVersionChange(from, target);
  if (refused !== void 0) return degraded2("UnsupportedVersionChange", `spec.version: ${refused}`);
  return void 0;
}
function clusterIDMismatch(observed) {
  const known = observed.knownClusterID;
  if (known === void 0 || !observed.etcd.reachable) return void 0;
  const answers = [
    ...observed.etcd.clusterID === void 0 ? [] : [{ who: "the member list", id: observed.etcd.clusterID }],
    ...observed.etcd.members.filter((m) => m.clusterID !== void 0).map((m) => ({ who: `member ${m.name}`, id: m.clusterID }))
  ];
  const other = answers.find((a) => a.id !== known);
  if (other === void 0) return void 0;
  return {
    type: "Degraded",
    reason: "ClusterIDMismatch",
    field: "status.clusterID",
    message: `${other.who} answers with cluster ID ${other.id}, but this EtcdCluster is cluster ${known} (status.clusterID): another cluster's member (or a re-bootstrapped one) is behind these pods; nothing is done until an operator resolves it`
  };
}

// src/plan/bootstrap.ts
function planUnreachable(spec, observed, options) {
  if (observed.bootstrapped) {
    const refused = versionGate(spec, observed.knownVersion);
    if (refused !== void 0) return refused;
    return (
      // The members last seen, and every member whose data claim exists: status.members can be empty or stale
      // (status wiped, then clusterID recovered before any member answered), and waiting for a quorum that only
      // these pods can bring back would wait for ever. Starting a pod on its own data never makes a new cluster.
      restartOnData(spec, observed, [.../* @__PURE__ */ new Set([...observed.knownMembers ?? [], ...observed.volumes])]) ?? quorumLost(observed)
    );
  }
  const restoring = planRestore(spec, observed, options);
  if (restoring !== void 0) return restoring;
  const seed = observed.volumes.length === 1 ? observed.volumes[0] : void 0;
  if (seed !== void 0 && observed.pods.length === 0 && (observed.terminating ?? []).length === 0 && (observed.seedVolumes ?? []).includes(seed)) {
    return {
      type: "CreateSeed",
      name: seed,
      message: `starting seed member ${seed} on its claim, made by an earlier CreateSeed`
    };
  }
  if (observed.volumes.length > 0) {
    const restart = restartOnData(spec, observed, observed.volumes);
    if (restart !== void 0) return restart;
  }
  if (observed.pods.length === 0 && observed.volumes.length === 0) {
    if ((observed.terminating ?? []).length > 0) {
      return wait(
        "PodTerminating",
        `waiting for ${observed.terminating?.map((p) => p.name).join(", ")} to go away`
      );
    }
    return {
      type: "CreateSeed",
      name: options.freshName,
      message: `bootstrapping with seed member ${options.freshName}`
    };
  }
  const lost = observed.pods.filter((p) => p.dataLost === true);
  if (lost.length > 0 && lost.length === observed.pods.length) {
    return {
      type: "Degraded",
      reason: "DataLost",
      message: `no status.clusterID is recorded and ${lost.map((p) => p.name).join(", ")} found an empty data directory: the data claims hold no cluster; delete the EtcdCluster's claims to bootstrap a new cluster (nothing is deleted automatically)`
    };
  }
  return wait("SeedStarting", `waiting for member ${observed.pods.map((p) => p.name).join(", ")} to answer`);
}
function restartOnData(spec, observed, names2) {
  if (spec.storage.ephemeral === true) return void 0;
  const withPod = new Set(observed.pods.map((p) => p.name));
  const name = [...names2].sort().find((n) => !withPod.has(n) && observed.volumes.includes(n));
  if (name === void 0) return void 0;
  return {
    type: "StartMemberPod",
    name,
    reason: "PodMissing",
    message: `the pod of member ${name} is gone while the cluster has no quorum; restarting it on its data volume`
  };
}

// src/plan/member-recovery.ts
function cleanup(view) {
  const memberNames = new Set(view.members.map((m) => m.name));
  const orphans = [...view.pods.keys(), ...view.observed.volumes].filter((n) => !memberNames.has(n)).sort();
  const name = orphans[0];
  if (name === void 0) return void 0;
  return {
    type: "CleanupMember",
    name,
    message: `deleting the pod and volume of ${name}, which is not a member`
  };
}
function missingPods(view) {
  const stuckAfter = view.threshold(view.spec.recovery?.terminatingSeconds, DEFAULT_TERMINATING_AFTER_MS);
  for (const m of view.members) {
    if (view.pods.has(m.name)) continue;
    const deleting2 = view.terminating.get(m.name);
    if (deleting2 !== void 0 && view.now.getTime() - deleting2.getTime() >= stuckAfter) {
      const forS = Math.round((view.now.getTime() - deleting2.getTime()) / 1e3);
      return view.removal(m, {
        type: "ReplaceMember",
        id: m.id,
        name: m.name,
        reason: "StuckTerminating",
        message: `the pod of member ${m.name} has been terminating for ${forS}s (its node may be unreachable); replacing the member with a fresh one`
      });
    }
    if (!m.started) {
      return {
        type: "StartMemberPod",
        name: m.name,
        reason: "NotStarted",
        message: `member ${m.name} was added but has no pod yet; starting it`
      };
    }
    const dataKept = view.spec.storage.ephemeral !== true && view.observed.volumes.includes(m.name);
    if (dataKept) {
      return {
        type: "StartMemberPod",
        name: m.name,
        reason: "PodMissing",
        message: `the pod of member ${m.name} is gone; restarting it on its data volume`
      };
    }
    return view.removal(m, {
      type: "ReplaceMember",
      id: m.id,
      name: m.name,
      reason: "DataLost",
      message: `member ${m.name} lost its pod and its data; removing it to add a fresh member`
    });
  }
  return void 0;
}
function alarms(view) {
  const alarms2 = view.observed.etcd.reachable ? view.observed.etcd.alarms ?? [] : [];
  const alarm = alarms2.find((a) => a.alarm === "CORRUPT") ?? alarms2[0];
  if (alarm === void 0) return void 0;
  const what = alarm.alarm === "NOSPACE" ? "the database reached its quota (--quota-backend-bytes) and the cluster accepts only reads and deletes: compact, defragment, then disarm the alarm (see the etcd operator docs)" : alarm.alarm === "CORRUPT" ? "a member's data differs from the others': restore that member from the healthy ones (see the etcd operator docs)" : "see etcd's documentation";
  return {
    type: "Degraded",
    reason: `Alarm${alarm.alarm.charAt(0)}${alarm.alarm.slice(1).toLowerCase()}`,
    message: `etcd alarm ${alarm.alarm} raised by ${alarm.member}: ${what}; no membership change is made until it is disarmed`
  };
}
function imagePull(view) {
  for (const m of view.members) {
    const failure = view.pods.get(m.name)?.imagePullError;
    if (failure === void 0) continue;
    if (failure.current) {
      return {
        type: "Degraded",
        reason: "ImagePullFailed",
        field: "spec.version",
        message: `member ${m.name} cannot pull image ${failure.image} (${failure.reason}); the member and its data are kept: fix spec.repository/spec.version (or the registry), or set spec.version back to recover`
      };
    }
    const to = view.spec.version;
    return {
      type: "UpgradeMember",
      id: m.id,
      name: m.name,
      from: failure.image,
      to,
      message: `member ${m.name} cannot pull ${failure.image} (${failure.reason}), which spec no longer asks for; moving it to ${to}`
    };
  }
  return void 0;
}
function deadMembers(view) {
  const recovery = view.spec.recovery ?? {};
  const deadAfter = view.options.deadAfterMs ?? view.threshold(recovery.memberNotReadySeconds, DEFAULT_DEAD_AFTER_MS);
  const unschedulableAfter = view.threshold(recovery.unschedulableSeconds, DEFAULT_UNSCHEDULABLE_AFTER_MS);
  const stallAfter = view.threshold(recovery.learnerStallSeconds, DEFAULT_LEARNER_STALL_MS);
  const age = (since) => view.now.getTime() - since.getTime();
  const replace = (m, reason, message) => view.removal(m, { type: "ReplaceMember", id: m.id, name: m.name, reason, message });
  for (const m of view.members) {
    const pod = view.pods.get(m.name);
    if (pod?.dataLost === true && m.started) {
      return replace(
        m,
        "DataLost",
        `member ${m.name} found its data directory empty and refused to rejoin under its old identity; replacing it with a fresh member`
      );
    }
    if (pod?.unschedulableSince !== void 0 && age(pod.unschedulableSince) >= unschedulableAfter) {
      return replace(
        m,
        "Unschedulable",
        `the pod of member ${m.name} has found no node for ${Math.round(age(pod.unschedulableSince) / 1e3)}s; replacing the member with a fresh one`
      );
    }
    if (m.isLearner) {
      if (view.caughtUp(m)) continue;
      const since = view.observed.learnerProgress?.[m.name];
      if (since !== void 0 && age(since) >= stallAfter) {
        return replace(
          m,
          "LearnerStalled",
          `learner ${m.name} has made no progress (raft index ${m.raftIndex ?? "unknown"}) for ${Math.round(age(since) / 1e3)}s; replacing it with a fresh member`
        );
      }
      continue;
    }
    if (pod === void 0 || pod.ready || pod.notReadySince === void 0) continue;
    if (age(pod.notReadySince) < deadAfter) continue;
    return replace(
      m,
      "Unhealthy",
      `member ${m.name} has not been ready for ${Math.round(age(pod.notReadySince) / 1e3)}s; replacing it with a fresh member`
    );
  }
  return void 0;
}

// src/plan/membership.ts
function scaleIn(view) {
  if (view.members.length <= view.spec.replicas) return void 0;
  const rank = (m) => m.isLearner ? 0 : !view.isWell(m) ? 1 : m.leader ? 3 : 2;
  const victim = [...view.members].sort((a, b2) => rank(a) - rank(b2) || byName(b2, a))[0];
  return view.removal(victim, {
    type: "RemoveMember",
    id: victim.id,
    name: victim.name,
    message: `scaling in from ${view.members.length} to ${view.spec.replicas} members: removing ${victim.name}`
  });
}
function learners(view) {
  const learner = view.members.find((m) => m.isLearner);
  if (learner === void 0) return void 0;
  const leader = view.members.find((m) => m.leader);
  if (!view.caughtUp(learner)) {
    const progress = learner.raftIndex === void 0 || leader?.raftIndex === void 0 ? "its progress is unknown" : `raft index ${learner.raftIndex} of the leader's ${leader.raftIndex}`;
    return wait("LearnerCatchingUp", `learner ${learner.name} is catching up (${progress})`);
  }
  return {
    type: "PromoteLearner",
    id: learner.id,
    name: learner.name,
    message: `promoting learner ${learner.name}, which has caught up with the leader`
  };
}
function unhealthy(view) {
  const sick = view.members.filter((m) => !view.isWell(m));
  if (sick.length === 0) return void 0;
  return wait("MemberUnhealthy", `waiting for ${names(sick)} to become healthy`);
}
function scaleOut(view) {
  if (view.members.length >= view.spec.replicas) return void 0;
  const name = view.options.freshName;
  const used = [...view.members.map((m) => m.name), ...view.pods.keys(), ...view.observed.volumes];
  if (used.includes(name)) return wait("NameInUse", `the new member name ${name} is already in use`);
  return {
    type: "AddLearner",
    name,
    message: `scaling out from ${view.members.length} to ${view.spec.replicas} members: adding learner ${name}`
  };
}

// src/plan/rollout.ts
function upgrade(view, target) {
  const to = formatEtcdVersion(target);
  const unknown = view.members.filter((m) => m.version === void 0);
  const outdated = view.members.filter((m) => {
    const v2 = m.version === void 0 ? void 0 : parseEtcdVersion(m.version);
    return v2 !== void 0 && compareEtcdVersions(v2, target) !== 0;
  });
  if (outdated.length === 0) return void 0;
  if (unknown.length > 0) return wait("VersionUnknown", `waiting for ${names(unknown)} to report a version`);
  const next = outdated.find((m) => !m.leader) ?? outdated[0];
  if (next.leader) {
    const moved = view.moveLeaderFrom(next, `before upgrading leader ${next.name}`);
    if (moved !== void 0) return moved;
  }
  return {
    type: "UpgradeMember",
    id: next.id,
    name: next.name,
    from: next.version,
    to,
    message: `upgrading member ${next.name} from ${next.version} to ${to}`
  };
}
function roll(view) {
  const outdated = view.members.filter((m) => view.pods.get(m.name)?.outdated === true);
  const next = outdated.find((m) => !m.leader) ?? outdated[0];
  if (next === void 0) return void 0;
  if (next.leader) {
    const moved = view.moveLeaderFrom(next, `before restarting leader ${next.name}`);
    if (moved !== void 0) return moved;
  }
  const step2 = {
    type: "RestartMember",
    id: next.id,
    name: next.name,
    message: `restarting member ${next.name} on its data to apply the changed podTemplate`
  };
  if (view.spec.storage.ephemeral === true) return view.removal(next, step2);
  const voters2 = view.members.filter((v2) => !v2.isLearner);
  if (voters2.length === 1) return step2;
  const healthyDuring = voters2.filter((v2) => view.counts(v2) && v2 !== next).length;
  if (healthyDuring < quorum2(voters2.length)) {
    return wait(
      "QuorumAtRisk",
      `not restarting ${next.name}: ${healthyDuring} of ${voters2.length} voters would stay healthy, below a quorum`
    );
  }
  return step2;
}
function defragment(view) {
  const percent = view.spec.maintenance?.defragThresholdPercent ?? DEFAULT_DEFRAG_THRESHOLD_PERCENT;
  const fragmented = view.members.filter((m) => {
    if (m.dbSize === void 0 || m.dbSizeInUse === void 0 || m.dbSize < DEFRAG_MIN_DB_BYTES) return false;
    return (m.dbSize - m.dbSizeInUse) / m.dbSize * 100 >= percent;
  });
  const next = fragmented.find((m) => !m.leader) ?? fragmented[0];
  if (next === void 0) return void 0;
  const free = Math.round(((next.dbSize ?? 0) - (next.dbSizeInUse ?? 0)) / (next.dbSize ?? 1) * 100);
  return {
    type: "Defragment",
    id: next.id,
    name: next.name,
    message: `defragmenting member ${next.name}: ${free}% of its ${next.dbSize} byte database is free pages (threshold ${percent}%)`
  };
}

// src/plan/plan.ts
function planNext(spec, observed, now, options) {
  if (spec.paused === true) {
    return wait(
      "Paused",
      "spec.paused is true: no membership change or pod update is made until it is unset"
    );
  }
  const owned2 = ownedFlagOverride(spec);
  if (owned2 !== void 0) return owned2;
  const refusedCredentials = authFailure(observed);
  if (refusedCredentials !== void 0) return refusedCredentials;
  const { etcd } = observed;
  if (!etcd.reachable) return planUnreachable(spec, observed, options);
  const mismatch = clusterIDMismatch(observed);
  if (mismatch !== void 0) return mismatch;
  const members = [...etcd.members].sort(byName);
  if (members.length === 0) return wait("NoMembers", "etcd answered with an empty member list");
  const view = new View(spec, observed, members, now, options);
  const voters2 = members.filter((m) => !m.isLearner);
  const healthy = voters2.filter((m) => m.healthy);
  if (healthy.length < quorum2(voters2.length)) {
    const refused2 = versionGate(spec, view.lowestVersion() ?? observed.knownVersion);
    if (refused2 !== void 0) return refused2;
    const started = members.filter((m) => m.started).map((m) => m.name);
    const restart = restartOnData(spec, observed, started);
    if (restart !== void 0) return restart;
    return quorumLost(observed);
  }
  const refused = versionGate(spec, view.lowestVersion());
  if (refused !== void 0) return refused;
  const target = parseEtcdVersion(spec.version);
  return cleanup(view) ?? missingPods(view) ?? alarms(view) ?? imagePull(view) ?? deadMembers(view) ?? scaleIn(view) ?? learners(view) ?? unhealthy(view) ?? planAuth(spec, observed.auth) ?? upgrade(view, target) ?? roll(view) ?? scaleOut(view) ?? defragment(view) ?? {
    type: "InSync",
    message: `${members.length} members on ${spec.version}, all healthy`
  };
}

// src/reconcile/cluster/cert-manager.ts
var FIELD_MANAGER = "capstan-etcd-operator";
var CertManagerUnavailable = class extends Error {
  problem;
  constructor(problem) {
    super(problem.message);
    this.problem = problem;
  }
};
function unavailable(cluster, err, field) {
  if (!isApiError(err)) return void 0;
  const e = err;
  if (e.code === 404) {
    return {
      reason: "CertManagerMissing",
      field,
      message: `${field}: cert-manager's API (certificates.cert-manager.io/v1) is not served in this cluster: install cert-manager, or choose another source of certificates for a new cluster (${e.message})`
    };
  }
  if (e.code === 403) {
    return {
      reason: "CertManagerForbidden",
      field,
      message: `${field}: the operator may not manage cert-manager Certificates in namespace ${clusterRef(cluster).namespace}: grant it certificates.cert-manager.io (the chart's RBAC does) (${e.message})`
    };
  }
  return void 0;
}
function readiness(cert) {
  const ready = cert?.status?.conditions?.find((c) => c.type === "Ready");
  if (ready === void 0) return "cert-manager has not reported on it yet";
  return `Ready=${ready.status}${ready.reason ? ` ${ready.reason}` : ""}${ready.message ? `: ${ready.message}` : ""}`;
}
function issued(data) {
  const [ca, cert, key] = [data["ca.crt"], data["tls.crt"], data["tls.key"]];
  return ca && cert && key ? { ca, cert, key } : void 0;
}
async function prepareCertManagerTLS(client, cluster, userSecrets, signal) {
  const { name, namespace } = clusterRef(cluster);
  const call = signal === void 0 ? {} : { signal };
  const events = [];
  const live = /* @__PURE__ */ new Map();
  try {
    const list = await client.list(CertificateKind, {
      namespace,
      labelSelector: `${CLUSTER_LABEL}=${name}`,
      ...call
    });
    for (const c of list.items) if (c.metadata.name !== void 0) live.set(c.metadata.name, c);
  } catch (err) {
    const problem = unavailable(cluster, err, firstCertManagerField(cluster));
    if (problem === void 0) throw err;
    return problem;
  }
  const readSecret = async (secretName) => {
    const secret = await client.get(Secret, secretName, namespace, signal).catch((err) => {
      if (isNotFound(err)) return void 0;
      throw err;
    });
    return issued(secretData(secret));
  };
  const inUse = /* @__PURE__ */ new Map();
  const ensure = async ({ field, certificate: certificate2 }, used = true) => {
    const certName = certificate2.metadata.name ?? "";
    const before = live.get(certName);
    let current = before;
    try {
      const result = await applyIfChanged(client, CertificateKind, certificate2, before, {
        fieldManager: FIELD_MANAGER,
        force: true
      });
      current = result.object;
      if (result.applied) {
        live.set(certName, current);
        events.push({
          reason: before === void 0 ? "CertificateCreated" : "CertificateUpdated",
          message: `${before === void 0 ? "created" : "updated"} cert-manager Certificate ${certName} (issuer ${certificate2.spec.issuerRef.kind} ${certificate2.spec.issuerRef.name}) for ${field}`
        });
      }
    } catch (err) {
      const problem = unavailable(cluster, err, field);
      if (problem === void 0) throw err;
      throw new CertManagerUnavailable(problem);
    }
    const pair = await readSecret(certificate2.spec.secretName);
    if (pair !== void 0 && used) {
      const { renewBefore } = certificate2.spec;
      inUse.set(certificate2.spec.secretName, {
        secret: certificate2.spec.secretName,
        field,
        source: "certManager",
        data: { "tls.crt": pair.cert, "ca.crt": pair.ca },
        keys: ["tls.crt", "ca.crt"],
        ...renewBefore === void 0 ? {} : { renewBeforeMs: parseGoDuration(renewBefore) },
        certificate: certName,
        issuer: `${certificate2.spec.issuerRef.kind} ${certificate2.spec.issuerRef.name}`
      });
    }
    const wait2 = pair === void 0 ? {
      reason: "CertificateNotReady",
      message: `waiting for cert-manager to issue Certificate ${namespace}/${certName} into Secret ${certificate2.spec.secretName} (${field}; ${readiness(current)})`
    } : void 0;
    return { pair, wait: wait2 };
  };
  let clientMaterial;
  let clientWait;
  try {
    for (const desired of clientCertificates(cluster)) {
      const { pair, wait: wait2 } = await ensure(desired);
      if (desired.certificate.spec.secretName !== operatorClientSecretName(cluster)) continue;
      if (wait2 !== void 0) clientWait = { ...wait2, field: desired.field, waiting: true };
      clientMaterial = pair;
    }
  } catch (err) {
    if (err instanceof CertManagerUnavailable) return err.problem;
    throw err;
  }
  if (clientWait !== void 0) return clientWait;
  const clientSource = clientTLS(cluster);
  if (clientSource?.kind === "secretRef") {
    const data = userSecrets.get(clientSource.secretName) ?? {};
    clientMaterial = issued(data);
  }
  const userFingerprints = [...userSecrets.values()].map((d) => shortFingerprint(d["tls.crt"] ?? ""));
  const ensureMemberCertificates = async (member, fresh) => {
    const fingerprints = [];
    let wait2;
    for (const desired of memberCertificates(cluster, member, fresh)) {
      const result = await ensure(desired, !fresh);
      if (result.pair !== void 0) fingerprints.push(shortFingerprint(result.pair.cert));
      wait2 ??= result.wait;
    }
    return { annotation: [...fingerprints, ...userFingerprints].join(","), wait: wait2 };
  };
  let reserved;
  return {
    ...clientMaterial === void 0 ? {} : { client: clientMaterial },
    issued: events,
    ensureMember: async (member) => (await ensureMemberCertificates(member, false)).annotation,
    podAnnotations: async (member) => {
      const { annotation } = await ensureMemberCertificates(member, false);
      return annotation === "" ? {} : { [CERTIFICATES_ANNOTATION]: annotation };
    },
    memberPending: async (member) => {
      const known = live.get(memberCertificates(cluster, member)[0]?.certificate.metadata.name ?? "");
      const fresh = known === void 0 || known.metadata.labels?.[NEW_MEMBER_LABEL] === "true";
      return (await ensureMemberCertificates(member, fresh)).wait;
    },
    reservedMember: () => reserved,
    forgetMembersExcept: async (keep) => {
      const gone = [...live.values()].filter((c) => {
        const labels = c.metadata.labels ?? {};
        const member = labels[MEMBER_LABEL];
        return labels["app.kubernetes.io/component"] === MEMBER_CERTIFICATE_COMPONENT && member !== void 0 && !keep.has(member);
      });
      const fresh = gone.filter((c) => c.metadata.labels?.[NEW_MEMBER_LABEL] === "true").sort(
        (a, b2) => (b2.metadata.creationTimestamp ?? "").localeCompare(a.metadata.creationTimestamp ?? "")
      );
      reserved = fresh[0]?.metadata.labels?.[MEMBER_LABEL];
      for (const c of gone) {
        if (c.metadata.labels?.[MEMBER_LABEL] === reserved) continue;
        const certName = c.metadata.name ?? "";
        await client.delete(CertificateKind, certName, namespace, call).catch((err) => {
          if (!isNotFound(err)) throw err;
        });
        await client.delete(Secret, c.spec.secretName, namespace, call).catch((err) => {
          if (!isNotFound(err)) throw err;
        });
        live.delete(certName);
        inUse.delete(c.spec.secretName);
        events.push({
          reason: "CertificateDeleted",
          message: `deleted cert-manager Certificate ${certName} and its Secret: member ${c.metadata.labels?.[MEMBER_LABEL]} is gone`
        });
      }
    },
    caState: () => void 0,
    inUse: () => [...inUse.values()]
  };
}

// src/reconcile/cluster/tls.ts
var MEMBER_TLS_COMPONENT = "member-tls";
function pairOf(secret) {
  const data = secretData(secret);
  const cert = data["tls.crt"];
  const key = data["tls.key"];
  return cert && key ? { cert, key } : void 0;
}
var NO_TLS = {
  ensureMember: async () => "",
  forgetMembersExcept: async () => {
  },
  podAnnotations: async () => ({}),
  caState: () => void 0,
  inUse: () => [],
  issued: []
};
var REQUIRED_KEYS = ["ca.crt", "tls.crt", "tls.key"];
async function prepareTLS(client, cluster, now, signal) {
  const peer = peerTLS(cluster);
  const clientSource = clientTLS(cluster);
  if (peer === void 0 && clientSource === void 0) return NO_TLS;
  const { name, namespace } = clusterRef(cluster);
  const call = signal === void 0 ? {} : { signal };
  const issued2 = [];
  const userSecrets = /* @__PURE__ */ new Map();
  const userInUse = /* @__PURE__ */ new Map();
  for (const [field, source] of [
    ["spec.tls.peer.secretRef", peer],
    ["spec.tls.client.secretRef", clientSource]
  ]) {
    if (source?.kind !== "secretRef") continue;
    const secret = await client.get(Secret, source.secretName, namespace, signal).catch((err) => {
      if (isNotFound(err)) return void 0;
      throw err;
    });
    const data = secretData(secret);
    const missing = REQUIRED_KEYS.filter((k2) => !data[k2]);
    if (secret === void 0 || missing.length > 0) {
      return {
        reason: "TLSSecretMissing",
        field,
        message: secret === void 0 ? `${field}: Secret ${namespace}/${source.secretName} does not exist (create it with ca.crt, tls.crt and tls.key)` : `${field}: Secret ${namespace}/${source.secretName} lacks ${missing.join(", ")}`
      };
    }
    userSecrets.set(source.secretName, data);
    const seen = userInUse.get(source.secretName);
    userInUse.set(source.secretName, {
      secret: source.secretName,
      field: seen === void 0 ? field : `${seen.field} and ${field}`,
      source: "secretRef",
      data,
      keys: ["tls.crt", "ca.crt"]
    });
  }
  if (usesCertManager(cluster)) {
    const tls = await prepareCertManagerTLS(client, cluster, userSecrets, signal);
    if (isTLSProblem(tls)) return tls;
    return { ...tls, inUse: () => [...userInUse.values(), ...tls.inUse()] };
  }
  const owned2 = /* @__PURE__ */ new Map();
  if (peer?.kind === "operatorManaged" || clientSource?.kind === "operatorManaged") {
    const list = await client.list(Secret, { namespace, labelSelector: `${CLUSTER_LABEL}=${name}`, ...call });
    for (const s of list.items) if (s.metadata.name !== void 0) owned2.set(s.metadata.name, s);
  }
  let ca;
  let bundle = "";
  let caSecret;
  let next;
  if (owned2.size > 0 || peer?.kind === "operatorManaged" || clientSource?.kind === "operatorManaged") {
    caSecret = owned2.get(caSecretName(cluster));
    ca = pairOf(caSecret);
    bundle = secretData(caSecret)["ca.crt"] ?? ca?.cert ?? "";
    const nextCert = secretData(caSecret)[NEXT_CA_CERT];
    const nextKey = secretData(caSecret)[NEXT_CA_KEY];
    if (ca !== void 0 && nextCert && nextKey) next = { cert: nextCert, key: nextKey };
    if (ca === void 0) {
      ca = await createCA({
        commonName: `${name}.${namespace} etcd CA`,
        organization: "capstan-etcd-operator",
        now
      });
      bundle = ca.cert;
      const secret = tlsSecret(cluster, caSecretName(cluster), ca, ca.cert);
      await client.create(Secret, secret, call).catch((err) => {
        if (!isAlreadyExists(err)) throw err;
      });
      caSecret = void 0;
      owned2.set(caSecretName(cluster), secret);
      issued2.push({
        reason: "CertificateIssued",
        message: `created the cluster CA in Secret ${caSecretName(cluster)}`
      });
    }
  }
  const ownInUse = /* @__PURE__ */ new Map();
  const operatorField = `spec.tls.${peer?.kind === "operatorManaged" ? "peer" : "client"}.operatorManaged`;
  if (ca !== void 0) {
    const leafValidityMs = peer?.kind === "operatorManaged" ? peer.validityMs : clientSource?.kind === "operatorManaged" ? clientSource.validityMs : 0;
    ownInUse.set(caSecretName(cluster), {
      secret: caSecretName(cluster),
      field: operatorField,
      source: "operatorManaged",
      data: { "tls.crt": ca.cert },
      keys: ["tls.crt"],
      renewBeforeMs: caRenewBeforeMs(leafValidityMs)
    });
  }
  const ensureLeaf = async (secretName, source, leaf, labels = {}, field = operatorField) => {
    const pair = await issueOrRenewLeaf(secretName, source, leaf, labels);
    ownInUse.set(secretName, {
      secret: secretName,
      field,
      source: "operatorManaged",
      data: { "tls.crt": pair.cert },
      keys: ["tls.crt"],
      renewBeforeMs: source.renewBeforeMs
    });
    return pair;
  };
  const issueOrRenewLeaf = async (secretName, source, leaf, labels) => {
    if (ca === void 0)
      throw new Error(`EtcdCluster ${namespace}/${name}: no CA to sign ${secretName} with`);
    const existing = owned2.get(secretName);
    const current = pairOf(existing);
    const why = renewalReason(current, {
      ca: ca.cert,
      hosts: leaf.hosts,
      now,
      renewBeforeMs: source.renewBeforeMs,
      what: `the certificate in Secret ${secretName}`
    });
    if (why === void 0 && current !== void 0) {
      if (secretData(existing)["ca.crt"] !== bundle) {
        await client.patch(
          Secret,
          secretName,
          namespace,
          { data: { "ca.crt": Buffer.from(bundle).toString("base64") } },
          "merge",
          call
        );
      }
      return current;
    }
    const pair = await issueCertificate(ca, { ...leaf, now, validityMs: source.validityMs });
    const desired = tlsSecret(cluster, secretName, pair, bundle, labels);
    if (existing === void 0) {
      await client.create(Secret, desired, call).catch((err) => {
        if (!isAlreadyExists(err)) throw err;
      });
    } else {
      await client.patch(Secret, secretName, namespace, { data: desired.data }, "merge", call);
    }
    owned2.set(secretName, desired);
    const notAfter = certificateInfo(pair.cert)?.notAfter.toISOString() ?? "?";
    issued2.push({
      reason: current === void 0 ? "CertificateIssued" : "CertificateRenewed",
      message: `${current === void 0 ? "issued" : `renewed (${why})`} the certificate in Secret ${secretName}, valid until ${notAfter}`
    });
    return pair;
  };
  let clientMaterial;
  if (clientSource?.kind === "secretRef") {
    const data = userSecrets.get(clientSource.secretName) ?? {};
    clientMaterial = { ca: data["ca.crt"] ?? "", cert: data["tls.crt"] ?? "", key: data["tls.key"] ?? "" };
  } else if (clientSource?.kind === "operatorManaged") {
    const clientField = "spec.tls.client.operatorManaged";
    const mine = await ensureLeaf(
      operatorClientSecretName(cluster),
      clientSource,
      { hosts: [], commonName: OPERATOR_CLIENT_CN, usages: ["client"] },
      {},
      clientField
    );
    await ensureLeaf(
      backupClientSecretName(cluster),
      clientSource,
      { hosts: [], commonName: BACKUP_CLIENT_CN, usages: ["client"] },
      {},
      clientField
    );
    clientMaterial = { ca: bundle, ...mine };
  }
  const memberSource = peer?.kind === "operatorManaged" ? peer : clientSource?.kind === "operatorManaged" ? clientSource : void 0;
  const userFingerprints = [...userSecrets.values()].map((d) => shortFingerprint(d["tls.crt"] ?? "")).join(",");
  const trusted = ca === void 0 ? "" : splitPemBundle(bundle).map(shortFingerprint).join(",");
  const ensureMember = async (member) => {
    if (memberSource === void 0) return userFingerprints;
    const pair = await ensureLeaf(
      memberTLSSecretName(member),
      memberSource,
      {
        hosts: memberHosts(cluster, member),
        commonName: memberCommonName(cluster),
        usages: ["server", "client"]
      },
      { [MEMBER_LABEL]: member, "app.kubernetes.io/component": MEMBER_TLS_COMPONENT }
    );
    const own = shortFingerprint(pair.cert);
    return userFingerprints === "" ? own : `${own},${userFingerprints}`;
  };
  const leafSource = memberSource ?? clientSource;
  return {
    ...clientMaterial === void 0 ? {} : { client: clientMaterial },
    issued: issued2,
    ensureMember,
    podAnnotations: async (member) => {
      const certificates = await ensureMember(member);
      return {
        ...certificates === "" ? {} : { [CERTIFICATES_ANNOTATION]: certificates },
        ...trusted === "" ? {} : { [TRUSTED_CA_ANNOTATION]: trusted }
      };
    },
    caState: () => {
      if (ca === void 0) return void 0;
      const leaves = /* @__PURE__ */ new Map();
      for (const [secretName, secret] of owned2) {
        const cert = secretData(secret)["tls.crt"];
        if (secretName !== caSecretName(cluster) && cert) leaves.set(secretName, cert);
      }
      return {
        ...caSecret === void 0 ? {} : { secret: caSecret },
        signing: ca,
        bundle,
        ...next === void 0 ? {} : { next },
        leafValidityMs: leafSource?.kind === "operatorManaged" ? leafSource.validityMs : 0,
        leaves
      };
    },
    inUse: () => [...userInUse.values(), ...ownInUse.values()],
    forgetMembersExcept: async (keep) => {
      for (const [secretName, secret] of owned2) {
        const labels = secret.metadata.labels ?? {};
        const member = labels[MEMBER_LABEL];
        if (labels["app.kubernetes.io/component"] !== MEMBER_TLS_COMPONENT || member === void 0) continue;
        if (keep.has(member)) continue;
        await client.delete(Secret, secretName, namespace, call).catch((err) => {
          if (!isNotFound(err)) throw err;
        });
        owned2.delete(secretName);
        ownInUse.delete(secretName);
      }
    }
  };
}
function isTLSProblem(x2) {
  return "reason" in x2;
}
async function readClientTLS(client, cluster, signal) {
  const secretName = operatorClientSecret(cluster);
  if (secretName === void 0) return void 0;
  const secret = await client.get(Secret, secretName, clusterRef(cluster).namespace, signal).catch((err) => {
    if (isNotFound(err)) return void 0;
    throw err;
  });
  const data = secretData(secret);
  const [ca, cert, key] = [data["ca.crt"], data["tls.crt"], data["tls.key"]];
  return ca && cert && key ? { ca, cert, key } : void 0;
}
async function rotateCA(client, cluster, obs, tls, now, signal) {
  const ca = tls.caState();
  const { etcd } = obs.observed;
  if (ca?.secret === void 0 || !etcd.reachable) return void 0;
  const { name, namespace } = clusterRef(cluster);
  const call = signal === void 0 ? {} : { signal };
  const input = rotationInput(cluster, obs, ca, now);
  const step2 = planCARotation(input);
  const caName = caSecretName(cluster);
  const patchCA = (patch) => client.patch(Secret, caName, namespace, patch, "merge", call);
  const b642 = (text) => Buffer.from(text).toString("base64");
  const wait2 = (reason, message) => ({ type: "Wait", reason, message });
  switch (step2.type) {
    case "None":
      return void 0;
    case "Wait":
      return { step: wait2(`CARotation${step2.reason}`, `CA rotation: ${step2.message}`) };
    case "CreateNextCA": {
      const asked = cluster.metadata.annotations?.[ROTATE_CA_ANNOTATION];
      const servedFor = asked !== void 0 && asked !== "" ? asked : "expiry";
      const nextCA = await createCA({
        commonName: `${name}.${namespace} etcd CA ${now.toISOString()}`,
        organization: "capstan-etcd-operator",
        now
      });
      await patchCA({
        metadata: {
          annotations: {
            [ROTATED_FOR_ANNOTATION]: servedFor,
            [ROTATION_STARTED_ANNOTATION]: now.toISOString()
          }
        },
        data: {
          [NEXT_CA_CERT]: b642(nextCA.cert),
          [NEXT_CA_KEY]: b642(nextCA.key),
          "ca.crt": b642(`${ca.bundle.trimEnd()}
${nextCA.cert}`)
        }
      });
      const why = servedFor === "expiry" ? `the CA expires at ${certificateInfo(ca.signing.cert)?.notAfter.toISOString()}` : `${ROTATE_CA_ANNOTATION}=${servedFor}`;
      const message = `CA rotation started (${why}): created the next CA in Secret ${caName}; every member trusts the old and the new CA after its restart, one member at a time`;
      return { step: wait2("CARotationStarted", message), event: { reason: "CARotationStarted", message } };
    }
    case "RestartMember":
      return { step: restartForTrust(cluster, obs, step2.name, step2.message) };
    case "SwitchSigningCA": {
      const next = ca.next;
      if (next === void 0) throw new Error(`EtcdCluster ${namespace}/${name}: no next CA to switch to`);
      await patchCA({ data: { "tls.crt": b642(next.cert), "tls.key": b642(next.key) } });
      const message = `CA rotation: every member trusts the new CA; it signs from now on (each certificate is issued again, served at the next handshake without a restart)`;
      return { step: wait2("CARotationSwitched", message), event: { reason: "CARotationSwitched", message } };
    }
    case "ReissueLeaf":
      await tls.ensureMember(step2.name);
      return { step: wait2("CARotationReissuing", `CA rotation: issuing ${step2.name}'s certificate again`) };
    case "DropOldCA": {
      const next = ca.next;
      if (next === void 0) throw new Error(`EtcdCluster ${namespace}/${name}: no next CA to keep`);
      await patchCA({ data: { "ca.crt": b642(next.cert), [NEXT_CA_CERT]: null, [NEXT_CA_KEY]: null } });
      const message = `CA rotation: every certificate is the new CA's; the old CA is dropped from the trusted bundle, and the members are restarted one at a time to stop trusting it`;
      return {
        step: wait2("CARotationOldCADropped", message),
        event: { reason: "CARotationOldCADropped", message }
      };
    }
  }
}
function rotationInput(cluster, obs, ca, now) {
  const bundlePems = splitPemBundle(ca.bundle);
  const known = [...bundlePems, ...ca.next === void 0 ? [] : [ca.next.cert]];
  const signingCA = shortFingerprint(ca.signing.cert);
  const issuerOf = (leaf) => {
    if (leaf === void 0) return signingCA;
    const by = known.find((c) => signedBy(leaf, c));
    return by === void 0 ? "unknown" : shortFingerprint(by);
  };
  const etcdMembers = obs.observed.etcd.reachable ? obs.observed.etcd.members : [];
  const startedAt = ca.secret?.metadata.annotations?.[ROTATION_STARTED_ANNOTATION];
  const unrecorded = (pod) => {
    if (startedAt === void 0) return [signingCA];
    const made = pod.metadata.creationTimestamp;
    const before = made !== void 0 && Date.parse(made) < Date.parse(startedAt) - 1e3;
    return before ? [signingCA] : ["unknown"];
  };
  const members = etcdMembers.map((m) => {
    const pod = obs.pods.get(m.name);
    const trusted = pod?.metadata.annotations?.[TRUSTED_CA_ANNOTATION];
    return {
      name: m.name,
      ready: pod !== void 0 && !podGone(pod) && podReady(pod),
      trusts: trusted ? trusted.split(",") : pod === void 0 ? [signingCA] : unrecorded(pod),
      leafIssuer: issuerOf(ca.leaves.get(memberTLSSecretName(m.name)))
    };
  });
  const clientIssuers = clientTLS(cluster)?.kind === "operatorManaged" ? [operatorClientSecretName(cluster), backupClientSecretName(cluster)].map(
    (s) => issuerOf(ca.leaves.get(s))
  ) : [];
  return {
    requested: rotationRequested({
      asked: cluster.metadata.annotations?.[ROTATE_CA_ANNOTATION],
      servedFor: ca.secret?.metadata.annotations?.[ROTATED_FOR_ANNOTATION],
      caNotAfter: certificateInfo(ca.signing.cert)?.notAfter,
      now,
      renewBeforeMs: caRenewBeforeMs(ca.leafValidityMs)
    }),
    signingCA,
    bundle: bundlePems.map(shortFingerprint),
    ...ca.next === void 0 ? {} : { nextCA: shortFingerprint(ca.next.cert) },
    clientIssuers,
    members
  };
}
function restartForTrust(cluster, obs, name, message) {
  const members = obs.observed.etcd.reachable ? obs.observed.etcd.members : [];
  const member = members.find((m) => m.name === name);
  if (member === void 0) {
    return {
      type: "Wait",
      reason: "CARotationMemberUnknown",
      message: `CA rotation: ${name} is not a member`
    };
  }
  const voters2 = members.filter((m) => !m.isLearner);
  const others = voters2.filter((m) => m !== member && m.healthy);
  if (member.leader) {
    const to = others.sort((a, b2) => a.name < b2.name ? -1 : a.name > b2.name ? 1 : 0)[0];
    if (to !== void 0) {
      return {
        type: "MoveLeader",
        from: member.id,
        to: to.id,
        toName: to.name,
        message: `moving leadership from ${name} to ${to.name} before restarting it for the CA rotation`
      };
    }
  }
  const ephemeral = cluster.spec.storage.ephemeral === true;
  if ((voters2.length > 1 || ephemeral) && !member.isLearner && others.length < quorum2(voters2.length)) {
    return {
      type: "Wait",
      reason: "CARotationQuorumAtRisk",
      message: `CA rotation: not restarting ${name}: ${others.length} of ${voters2.length} voters would stay healthy, below a quorum`
    };
  }
  return { type: "RestartMember", id: member.id, name, message: `CA rotation: ${message}` };
}

// src/reconcile/job.ts
function observeJob(job) {
  const conditions = job.status?.conditions ?? [];
  const isTrue = (type) => conditions.find((c) => c.type === type && c.status === "True");
  const failed = isTrue("Failed");
  const complete = isTrue("Complete");
  const member = job.metadata?.annotations?.[BACKUP_MEMBER_ANNOTATION];
  const location = job.metadata?.annotations?.[BACKUP_LOCATION_ANNOTATION];
  const start = job.status?.startTime;
  const end = job.status?.completionTime ?? failed?.lastTransitionTime;
  return {
    succeeded: complete !== void 0,
    ...member === void 0 ? {} : { member },
    ...location === void 0 ? {} : { location },
    ...start === void 0 ? {} : { startTime: new Date(start) },
    ...end === void 0 ? {} : { completionTime: new Date(end) },
    ...failed === void 0 ? {} : { failed: { reason: failed.reason ?? "Failed", message: failed.message ?? "" } }
  };
}

// src/reconcile/backup/controller.ts
function etcdBackupController(options) {
  return controller({
    name: "etcdbackup",
    for: EtcdBackupKind,
    owns: [Job],
    // Spec edits, creation and deletion (a deletion request is a metadata change only); not status writes.
    predicates: [
      {
        update: (o, n) => o.metadata.generation !== n.metadata.generation || o.metadata.deletionTimestamp !== n.metadata.deletionTimestamp
      }
    ],
    maxConcurrentReconciles: 2,
    reconcile: (req, ctx) => reconcileEtcdBackup(req, ctx, options)
  });
}
function apiLogReader(ctx) {
  return async (namespace, pod, container, signal) => {
    const path = `/api/v1/namespaces/${encodeURIComponent(namespace)}/pods/${encodeURIComponent(pod)}/log?container=${encodeURIComponent(container)}&tailLines=50`;
    const body = await ctx.client.raw(path, signal);
    return typeof body === "string" ? body : JSON.stringify(body);
  };
}
var POD_ERROR_MAX = 600;
async function withPodError(ctx, backup, job) {
  if (job.failed === void 0) return job;
  const pods = await ctx.cache.list(Pod, {
    namespace: backup.metadata.namespace ?? "",
    labels: { [BACKUP_LABEL]: backup.metadata.name ?? "" }
  });
  const failed = pods.filter((p) => p.status?.phase === "Failed").sort((a, b2) => (b2.metadata.creationTimestamp ?? "").localeCompare(a.metadata.creationTimestamp ?? ""));
  for (const pod of failed) {
    const statuses = [...pod.status?.initContainerStatuses ?? [], ...pod.status?.containerStatuses ?? []];
    const broken = statuses.find((c) => (c.state?.terminated?.exitCode ?? 0) !== 0);
    const said = broken?.state?.terminated?.message?.trim();
    if (broken === void 0 || said === void 0 || said === "") continue;
    const tail = said.length > POD_ERROR_MAX ? `...${said.slice(-POD_ERROR_MAX)}` : said;
    return { ...job, failed: { ...job.failed, message: `${job.failed.message}; ${broken.name}: ${tail}` } };
  }
  return job;
}
async function readResults(ctx, backup, readLog) {
  const namespace = backup.metadata.namespace ?? "";
  const pods = await ctx.cache.list(Pod, {
    namespace,
    labels: { [BACKUP_LABEL]: backup.metadata.name ?? "" }
  });
  const pod = pods.find((p) => p.status?.phase === "Succeeded");
  if (pod === void 0) return void 0;
  const upload = pod.status?.containerStatuses?.find((c) => c.name === UPLOAD_CONTAINER);
  let log;
  try {
    log = await readLog(namespace, pod.metadata?.name ?? "", VERIFY_CONTAINER, ctx.signal);
  } catch (err) {
    ctx.log.warn({ err: err.message }, "reading the verify step's log failed; will retry");
    return void 0;
  }
  const uploadResult = parseUploadResult(upload?.state?.terminated?.message);
  const snapshot = parseSnapshotStatus(log);
  return {
    ...uploadResult === void 0 ? {} : { upload: uploadResult },
    ...snapshot === void 0 ? {} : { snapshot }
  };
}
async function observeClaim(ctx, backup) {
  const pvc = backup.spec.destination.pvc;
  if (pvc === void 0) return void 0;
  try {
    const claim = await ctx.client.get(
      PersistentVolumeClaim,
      pvc.claimName,
      backup.metadata.namespace,
      ctx.signal
    );
    const labels = claim.metadata?.labels ?? {};
    const owner = claim.metadata?.ownerReferences?.find((r) => r.kind === EtcdClusterKind.kind);
    const etcdCluster = owner?.name ?? (labels["app.kubernetes.io/managed-by"] === MANAGED_BY ? labels[CLUSTER_LABEL] : void 0);
    return etcdCluster === void 0 ? {} : { etcdCluster };
  } catch (err) {
    if (isNotFound(err)) return void 0;
    throw err;
  }
}
async function reconcileEtcdBackup(req, ctx, options) {
  const found = await ctx.cache.get(EtcdBackupKind, req.name, req.namespace);
  if (found === void 0) return void 0;
  let backup = found;
  const namespace = backup.metadata.namespace ?? "";
  const liveJob = await ctx.cache.get(Job, backup.metadata.name ?? "", namespace);
  const observedJob = liveJob === void 0 ? void 0 : observeJob(liveJob);
  const job = observedJob?.failed === void 0 ? observedJob : await withPodError(ctx, backup, observedJob);
  if (backup.metadata.deletionTimestamp !== void 0) return reconcileDeletion(ctx, backup, job, options);
  const deletion = planBackupDeletion({ backup, backupJob: job });
  if (deletion.action?.type === "AddFinalizer") {
    backup = await addFinalizer(ctx.client, EtcdBackupKind, backup, SNAPSHOT_FINALIZER);
  }
  const phase = backup.status?.phase;
  const cluster = await ctx.cache.get(EtcdClusterKind, backup.spec.clusterName, namespace);
  const metrics2 = cluster === void 0 ? void 0 : options.metrics;
  if (phase === "Succeeded" || phase === "Failed") {
    const done = backup.status?.completionTime;
    if (phase === "Succeeded" && done !== void 0)
      metrics2?.backupSucceeded(namespace, backup.spec.clusterName, new Date(done));
    return void 0;
  }
  const claim = job === void 0 ? await observeClaim(ctx, backup) : void 0;
  let members;
  if (job === void 0 && cluster !== void 0) {
    const tls = await readClientTLS(ctx.client, cluster, ctx.signal);
    const { credentials } = await prepareAuth(ctx.client, cluster, { create: false, signal: ctx.signal });
    const factory = options.etcdClient ?? defaultEtcdClient;
    const obs = await observe(cluster, ctx.cache, factory, ctx.signal, tls, credentials);
    members = obs.observed.etcd.reachable ? obs.observed.etcd.members : void 0;
  }
  const results = job?.succeeded === true ? await readResults(ctx, backup, options.readLog ?? apiLogReader(ctx)) : void 0;
  const secretsProblem = job === void 0 ? await s3SecretsProblem(ctx, backup) : void 0;
  const now = /* @__PURE__ */ new Date();
  const plan = planBackup({ backup, cluster, members, claim, job, results, now, secretsProblem });
  if (plan.action?.type === "CreateJob" && cluster !== void 0) {
    const obj = backupJob({
      backup,
      cluster,
      member: plan.action.member,
      operatorImage: options.operatorImage
    });
    try {
      await ctx.client.create(Job, obj, { signal: ctx.signal });
    } catch (err) {
      if (!isAlreadyExists(err)) throw err;
    }
  }
  if (plan.event !== void 0) {
    ctx.recorder.event(backup, plan.event.type, plan.event.reason, "Backup", plan.event.message);
  }
  await writeStatus(ctx, backup, plan, now);
  if (plan.status.phase === "Succeeded")
    metrics2?.backupSucceeded(namespace, backup.spec.clusterName, new Date(plan.status.completionTime ?? now));
  if (plan.status.phase === "Failed") metrics2?.backupFailed(namespace, backup.spec.clusterName);
  return plan.requeueAfter === void 0 ? void 0 : { requeueAfter: plan.requeueAfter };
}
async function observeClaimForDeletion(ctx, backup) {
  const pvc = backup.spec.destination.pvc;
  if (pvc === void 0) return void 0;
  try {
    const claim = await ctx.client.get(
      PersistentVolumeClaim,
      pvc.claimName,
      backup.metadata.namespace,
      ctx.signal
    );
    return claim.metadata?.deletionTimestamp === void 0 ? {} : { deleting: true };
  } catch (err) {
    if (isNotFound(err)) return void 0;
    throw err;
  }
}
async function s3SecretsProblem(ctx, backup) {
  const s3 = backup.spec.destination.s3;
  if (s3 === void 0) return void 0;
  const namespace = backup.metadata.namespace ?? "";
  const field = "spec.destination.s3";
  const creds = s3.credentialsSecret;
  const wanted = [
    {
      secret: creds.name,
      key: creds.accessKeyIDKey ?? DEFAULT_ACCESS_KEY_ID_KEY,
      secretField: `${field}.credentialsSecret.name`,
      keyField: `${field}.credentialsSecret.accessKeyIDKey`
    },
    {
      secret: creds.name,
      key: creds.secretAccessKeyKey ?? DEFAULT_SECRET_ACCESS_KEY_KEY,
      secretField: `${field}.credentialsSecret.name`,
      keyField: `${field}.credentialsSecret.secretAccessKeyKey`
    },
    ...s3.caSecret === void 0 ? [] : [
      {
        secret: s3.caSecret.name,
        key: s3.caSecret.key ?? DEFAULT_CA_KEY,
        secretField: `${field}.caSecret.name`,
        keyField: `${field}.caSecret.key`
      }
    ]
  ];
  const read = /* @__PURE__ */ new Map();
  for (const w2 of wanted) {
    if (!read.has(w2.secret)) {
      const data2 = await ctx.client.get(Secret, w2.secret, namespace, ctx.signal).then(
        (s) => s.data ?? {},
        (err) => {
          if (isNotFound(err)) return void 0;
          throw err;
        }
      );
      read.set(w2.secret, data2);
    }
    const data = read.get(w2.secret);
    if (data === void 0) return `${w2.secretField}: Secret ${namespace}/${w2.secret} does not exist`;
    if (data[w2.key] === void 0)
      return `${w2.keyField}: Secret ${namespace}/${w2.secret} has no key ${w2.key}`;
  }
  return void 0;
}
async function secretKey(ctx, namespace, name, key) {
  let data;
  try {
    data = (await ctx.client.get(Secret, name, namespace, ctx.signal)).data;
  } catch (err) {
    if (isNotFound(err))
      throw new DeletionError("CredentialsNotFound", `Secret ${namespace}/${name} does not exist`);
    throw err;
  }
  const value = data?.[key];
  if (value === void 0)
    throw new DeletionError("CredentialsNotFound", `Secret ${namespace}/${name} has no key ${key}`);
  return Buffer.from(value, "base64").toString("utf8");
}
var DeletionError = class extends Error {
  reason;
  constructor(reason, message) {
    super(message);
    this.reason = reason;
  }
};
async function deleteStoredObject(ctx, backup, deleter) {
  const s3 = backup.spec.destination.s3;
  const target = uploadTarget(backup).target;
  if (s3 === void 0 || target.kind !== "s3") return;
  const namespace = backup.metadata.namespace ?? "";
  const creds = s3.credentialsSecret;
  const accessKeyId = await secretKey(
    ctx,
    namespace,
    creds.name,
    creds.accessKeyIDKey ?? DEFAULT_ACCESS_KEY_ID_KEY
  );
  const secretAccessKey = await secretKey(
    ctx,
    namespace,
    creds.name,
    creds.secretAccessKeyKey ?? DEFAULT_SECRET_ACCESS_KEY_KEY
  );
  const ca = s3.caSecret === void 0 ? void 0 : await secretKey(ctx, namespace, s3.caSecret.name, s3.caSecret.key ?? DEFAULT_CA_KEY);
  try {
    await deleter(
      {
        bucket: target.bucket,
        key: target.key,
        region: s3.region ?? DEFAULT_S3_REGION,
        ...s3.endpoint === void 0 ? {} : { endpoint: s3.endpoint },
        forcePathStyle: s3.forcePathStyle === true,
        credentials: { accessKeyId, secretAccessKey },
        ...ca === void 0 ? {} : { ca }
      },
      ctx.signal
    );
  } catch (err) {
    const e = err;
    const code = e.$metadata?.httpStatusCode;
    const reason = code === 401 || code === 403 ? "StorageAccessDenied" : "StorageUnreachable";
    throw new DeletionError(reason, `${s3.endpoint ?? "S3"}: ${e.name ?? "Error"}: ${e.message}`);
  }
}
async function reconcileDeletion(ctx, backup, job, options) {
  const namespace = backup.metadata.namespace ?? "";
  const name = backup.metadata.name ?? "";
  const pvc = backup.spec.destination.pvc !== void 0;
  const liveDeleteJob = pvc ? await ctx.cache.get(Job, deleteJobName(backup), namespace) : void 0;
  const claim = pvc ? await observeClaimForDeletion(ctx, backup) : void 0;
  const inUse = await observeBackupsInUse(ctx.cache, namespace);
  let plan = planBackupDeletion({
    backup,
    backupJob: job,
    deleteJob: liveDeleteJob === void 0 ? void 0 : observeJob(liveDeleteJob),
    claim,
    usedBy: inUse.get(name)
  });
  switch (plan.action?.type) {
    case "DeleteBackupJob":
      await ctx.client.delete(Job, name, namespace, { propagationPolicy: "Background", signal: ctx.signal }).catch((err) => {
        if (!isNotFound(err)) throw err;
      });
      break;
    case "DeleteObject":
      try {
        await deleteStoredObject(ctx, backup, options.deleteObject ?? deleteS3Object);
        plan = planObjectDeleted(backup);
      } catch (err) {
        if (!(err instanceof DeletionError)) throw err;
        plan = planDeletionFailure(backup, err.reason, err.message);
      }
      break;
    case "CreateDeleteJob":
      try {
        await ctx.client.create(Job, deleteJob(backup, options.operatorImage), { signal: ctx.signal });
      } catch (err) {
        if (isAlreadyExists(err)) break;
        if (err instanceof ApiError && err.code === 403 && /terminat/i.test(err.message)) {
          plan = {
            action: { type: "RemoveFinalizer" },
            conditions: [],
            event: {
              type: "Normal",
              reason: "ClaimGone",
              message: `namespace ${namespace} is being deleted: the snapshot goes with its claim`
            }
          };
          break;
        }
        throw err;
      }
      break;
    case "RetryDeleteJob":
      await ctx.client.delete(Job, deleteJobName(backup), namespace, {
        propagationPolicy: "Background",
        signal: ctx.signal
      }).catch((err) => {
        if (!isNotFound(err)) throw err;
      });
      break;
    default:
      break;
  }
  if (plan.event !== void 0) {
    ctx.recorder.event(backup, plan.event.type, plan.event.reason, "Delete", plan.event.message);
  }
  if (plan.action?.type === "RemoveFinalizer") {
    if (liveDeleteJob !== void 0) {
      await ctx.client.delete(Job, deleteJobName(backup), namespace, {
        propagationPolicy: "Background",
        signal: ctx.signal
      }).catch((err) => {
        if (!isNotFound(err)) throw err;
      });
    }
    await removeFinalizer(ctx.client, EtcdBackupKind, backup, SNAPSHOT_FINALIZER).catch((err) => {
      if (!isNotFound(err)) throw err;
    });
    return void 0;
  }
  await writeConditions(ctx, backup, plan.conditions, /* @__PURE__ */ new Date());
  return plan.requeueAfter === void 0 ? void 0 : { requeueAfter: plan.requeueAfter };
}
async function writeConditions(ctx, backup, planned, now) {
  if (planned.length === 0) return;
  await writeStatus(ctx, backup, { status: {}, conditions: planned }, now);
}
async function writeStatus(ctx, backup, plan, now) {
  if (plan.conditions.length === 0 && Object.keys(plan.status).length === 0) return;
  const generation = backup.metadata.generation;
  let conditions = backup.status?.conditions;
  for (const c of plan.conditions) {
    conditions = setCondition(
      conditions,
      { ...c, ...generation === void 0 ? {} : { observedGeneration: generation } },
      now
    );
  }
  const next = {
    ...backup.status,
    ...plan.status,
    ...generation === void 0 ? {} : { observedGeneration: generation },
    ...conditions === void 0 ? {} : { conditions }
  };
  const patch = statusMergePatch(backup.status, next);
  if (patch !== void 0) {
    await ctx.client.patchStatus(
      EtcdBackupKind,
      backup.metadata.name ?? "",
      backup.metadata.namespace,
      patch,
      "merge",
      {
        signal: ctx.signal
      }
    );
  }
}

// src/reconcile/cluster/controller.ts
import { randomInt } from "node:crypto";

// src/desired/cluster-objects.ts
function owned(cluster, obj) {
  setControllerReference(cluster, EtcdClusterKind, obj);
  return obj;
}
function memberDataClaim(cluster, member, options = {}) {
  const { storage } = cluster.spec;
  if (storage.ephemeral === true) return void 0;
  const claim = {
    apiVersion: "v1",
    kind: "PersistentVolumeClaim",
    metadata: {
      name: dataClaimName(member),
      namespace: clusterRef(cluster).namespace,
      labels: memberLabels(cluster, member),
      ...options.seed === true ? { annotations: { [SEED_CLAIM_ANNOTATION]: "true" } } : {}
    },
    spec: {
      accessModes: ["ReadWriteOnce"],
      resources: { requests: { storage: storage.size ?? DEFAULT_STORAGE_SIZE } },
      ...storage.storageClassName === void 0 ? {} : { storageClassName: storage.storageClassName }
    }
  };
  return retainedClaim(cluster, EtcdClusterKind, claim, storage.whenDeleted ?? "Retain", CLAIM_UID_LABEL);
}
function peerService(cluster) {
  return owned(cluster, {
    apiVersion: "v1",
    kind: "Service",
    metadata: {
      name: peerServiceName(cluster),
      namespace: clusterRef(cluster).namespace,
      labels: clusterLabels(cluster)
    },
    spec: {
      clusterIP: "None",
      publishNotReadyAddresses: true,
      selector: selectorLabels(cluster),
      ports: [
        { name: "peer", port: PEER_PORT, targetPort: "peer" },
        { name: "client", port: CLIENT_PORT, targetPort: "client" }
      ]
    }
  });
}
function clientService(cluster) {
  return owned(cluster, {
    apiVersion: "v1",
    kind: "Service",
    metadata: {
      name: clientServiceName(cluster),
      namespace: clusterRef(cluster).namespace,
      labels: clusterLabels(cluster)
    },
    spec: {
      type: "ClusterIP",
      selector: selectorLabels(cluster),
      ports: [{ name: "client", port: CLIENT_PORT, targetPort: "client" }]
    }
  });
}
function podDisruptionBudget(cluster, voters2 = 0) {
  return owned(cluster, {
    apiVersion: "policy/v1",
    kind: "PodDisruptionBudget",
    metadata: {
      name: clusterRef(cluster).name,
      namespace: clusterRef(cluster).namespace,
      labels: clusterLabels(cluster)
    },
    spec: {
      minAvailable: quorum2(Math.max(cluster.spec.replicas, voters2)),
      selector: { matchLabels: selectorLabels(cluster) }
    }
  });
}

// src/plan/cluster-step.ts
function planClusterStep(input) {
  const { tls, auth, automatic } = input;
  if (tls !== void 0) {
    return tls.waiting === true ? { type: "Wait", reason: tls.reason, message: tls.message } : { type: "Degraded", reason: tls.reason, field: tls.field, message: tls.message };
  }
  if (auth !== void 0) return { type: "Degraded", ...auth };
  const planned = input.membership();
  if (planned.type === "QuorumLost" && (automatic.type === "NoBackup" || automatic.type === "Blocked")) {
    return {
      type: "Degraded",
      reason: automatic.type === "NoBackup" ? "AutomaticRecoveryNoBackup" : "AutomaticRecoveryFailed",
      field: "spec.recovery.automatic",
      message: automatic.message
    };
  }
  return planned;
}
function automaticRecoveryMayRun(tls) {
  return tls === void 0;
}
function caRotationMayRun(step2, tls) {
  return step2.type === "InSync" && tls === void 0;
}

// src/reconcile/restore/automatic-recovery.ts
import { createHash as createHash4 } from "node:crypto";

// src/reconcile/restore/recovery.ts
import { createHash as createHash3 } from "node:crypto";

// src/reconcile/restore/bootstrap-restore.ts
async function observeRestore(cluster, cache, claims, operatorImage, request2 = void 0) {
  const restore = cluster.spec.bootstrap?.restore;
  if (restore === void 0) return void 0;
  const { namespace } = clusterRef(cluster);
  const marked = [];
  for (const [name, claim] of claims) {
    if (request2 !== void 0 && claim.metadata.annotations?.[RESTORE_REQUEST_ANNOTATION] !== request2.name) {
      continue;
    }
    const state = claim.metadata.annotations?.[RESTORE_CLAIM_ANNOTATION];
    if (state === "pending" || state === "done") marked.push({ name, state });
  }
  const backup = restore.backup === void 0 ? void 0 : await cache.get(EtcdBackupKind, restore.backup.name, namespace);
  const liveJob = await cache.get(Job, request2?.jobName ?? restoreJobName(cluster), namespace);
  const job = liveJob === void 0 ? void 0 : observeJob(liveJob);
  const jobSeed = liveJob === void 0 ? void 0 : restoreJobSeed(liveJob);
  let from;
  let sourceError;
  if (restore.backup === void 0 || backup?.status?.phase === "Succeeded") {
    try {
      from = resolveRestoreSource(restore, backup);
    } catch (err) {
      sourceError = err instanceof Error ? err.message : String(err);
    }
  }
  const s = backup?.status;
  return {
    observed: {
      claims: marked,
      operatorImage: operatorImage !== void 0 && operatorImage !== "",
      ...backup === void 0 ? {} : {
        backup: {
          ...s?.phase === void 0 ? {} : { phase: s.phase },
          ...s?.etcdVersion === void 0 ? {} : { etcdVersion: s.etcdVersion },
          ...s?.sha256 === void 0 ? {} : { sha256: s.sha256 },
          ...s?.revision === void 0 ? {} : { revision: s.revision }
        }
      },
      ...job === void 0 ? {} : {
        job: {
          succeeded: job.succeeded,
          ...job.failed === void 0 ? {} : { failed: job.failed },
          ...jobSeed === void 0 ? {} : { seed: jobSeed }
        }
      },
      ...sourceError === void 0 ? {} : { sourceError }
    },
    ...backup === void 0 ? {} : { backup },
    ...from === void 0 ? {} : { from },
    ...operatorImage === void 0 ? {} : { operatorImage }
  };
}
async function startRestore(ctx, restore, seed, options = {}) {
  if (restore?.from === void 0 || restore.operatorImage === void 0) {
    return {
      done: false,
      reason: "RestoreSourceUnknown",
      message: "the restore source or the operator image is not known yet"
    };
  }
  const call = ctx.signal === void 0 ? {} : { signal: ctx.signal };
  if (!ctx.obs.claims.has(seed)) {
    const claim = memberDataClaim(ctx.cluster, seed, { seed: true });
    if (claim === void 0) {
      return {
        done: false,
        reason: "RestoreNeedsStorage",
        message: "spec.bootstrap.restore needs persistent storage (storage.size)"
      };
    }
    claim.metadata.annotations = {
      ...claim.metadata.annotations,
      ...options.claimAnnotations,
      [RESTORE_CLAIM_ANNOTATION]: "pending"
    };
    await ctx.client.create(PersistentVolumeClaim, claim, call).catch(ignoreExists);
  }
  const job = restoreJob({
    cluster: ctx.cluster,
    seed,
    from: restore.from,
    operatorImage: restore.operatorImage,
    ...options.jobName === void 0 ? {} : { name: options.jobName },
    ...options.bumpRevision === void 0 ? {} : { bumpRevision: options.bumpRevision }
  });
  await ctx.client.create(Job, job, call).catch(ignoreExists);
  return { done: true };
}
async function finishRestore(ctx, seed, now = /* @__PURE__ */ new Date()) {
  await ctx.client.patch(
    PersistentVolumeClaim,
    dataClaimName(seed),
    clusterRef(ctx.cluster).namespace,
    {
      metadata: {
        annotations: { [RESTORE_CLAIM_ANNOTATION]: "done", [RESTORE_TIME_ANNOTATION]: now.toISOString() }
      }
    },
    "merge",
    ctx.signal === void 0 ? {} : { signal: ctx.signal }
  );
  return { done: true };
}
function restoreStatusOf(cluster, previous, restore, claims, clusterID) {
  const spec = cluster.spec.bootstrap?.restore;
  if (spec === void 0) return previous;
  const done = restore?.observed.claims.find((c) => c.state === "done");
  if (previous === void 0 && done === void 0) return void 0;
  const bumpRevision = previous?.bumpRevision ?? spec.bumpRevision ?? DEFAULT_BUMP_REVISION;
  const snapshotRevision = previous?.snapshotRevision ?? restore?.backup?.status?.revision;
  const completionTime = previous?.completionTime ?? (done === void 0 ? void 0 : claims.get(done.name)?.metadata.annotations?.[RESTORE_TIME_ANNOTATION]);
  const id = previous?.clusterID ?? clusterID;
  return {
    source: previous?.source ?? restoreSourceName(spec),
    ...snapshotRevision === void 0 ? {} : { snapshotRevision, revision: snapshotRevision + bumpRevision },
    bumpRevision,
    ...completionTime === void 0 ? {} : { completionTime },
    ...id === void 0 ? {} : { clusterID: id }
  };
}
function ignoreExists(err) {
  if (!isAlreadyExists(err)) throw err;
  return void 0;
}

// src/reconcile/cluster/act.ts
var MEMBERSHIP_TIMEOUT_MS = 1e4;
var DEFRAG_TIMEOUT_MS = 5 * 6e4;
var DONE = { done: true };
function memberIdToDecimal(hex) {
  return BigInt(`0x${hex}`).toString(10);
}
async function act(step2, ctx) {
  const etcd = (without) => (ctx.etcdClient ?? ((e, tls, auth) => new EtcdClient({
    endpoints: e,
    timeoutMs: MEMBERSHIP_TIMEOUT_MS,
    ...tls === void 0 ? {} : { tls },
    ...auth === void 0 ? {} : { auth }
  })))(endpointsWithout(ctx, without), ctx.tls, ctx.auth);
  const call = ctx.signal === void 0 ? {} : { signal: ctx.signal };
  switch (step2.type) {
    case "CreateSeed":
      return startMember(
        ctx,
        step2.name,
        "new",
        [{ name: step2.name, peerURL: peerURL(ctx.cluster, step2.name) }],
        { seed: true }
      );
    case "StartMemberPod": {
      if (step2.reason === "PodMissing") {
        return startMember(ctx, step2.name, "existing", [
          { name: step2.name, peerURL: peerURL(ctx.cluster, step2.name) }
        ]);
      }
      const initial = ctx.obs.members.map((m) => ({
        name: m.name || memberNameFromPeerURL(m.peerURLs[0] ?? "") || "",
        peerURL: m.peerURLs[0] ?? ""
      }));
      return startMember(ctx, step2.name, "existing", initial);
    }
    case "AddLearner": {
      const wait2 = await ctx.memberPending?.(step2.name);
      if (wait2 !== void 0) return { done: false, ...wait2 };
      await etcd().memberAddAsLearner([peerURL(ctx.cluster, step2.name)], call);
      return DONE;
    }
    case "PromoteLearner":
      await etcd().memberPromote(memberIdToDecimal(step2.id), call);
      return DONE;
    case "MoveLeader":
      await etcd().moveLeader(memberIdToDecimal(step2.to), call);
      return DONE;
    case "RemoveMember":
    case "ReplaceMember": {
      const client = etcd(step2.name);
      const { members } = await client.memberList({ ...call, linearizable: true });
      const id = memberIdToDecimal(step2.id);
      if (members.some((m) => m.id === id)) await client.memberRemove(id, call);
      await deleteMemberObjects(
        ctx,
        step2.name,
        step2.type === "ReplaceMember" && step2.reason === "StuckTerminating"
      );
      return DONE;
    }
    case "CleanupMember": {
      const { members } = await etcd().memberList({ ...call, linearizable: true });
      const listed = members.some(
        (m) => m.name === step2.name || memberNameFromPeerURL(m.peerURLs[0] ?? "") === step2.name
      );
      if (listed) {
        return {
          done: false,
          reason: "MemberStillListed",
          message: `not deleting the pod and volume of ${step2.name}: a quorum still lists it as a member`
        };
      }
      await deleteMemberObjects(ctx, step2.name);
      return DONE;
    }
    case "Defragment": {
      const ip = ctx.obs.pods.get(step2.name)?.status?.podIP;
      if (ip === void 0) {
        return {
          done: false,
          reason: "PodMissing",
          message: `member ${step2.name} has no pod IP to defragment`
        };
      }
      await etcd().defragment(`${clientScheme(ctx.cluster)}://${ip}:${CLIENT_PORT}`, {
        ...call,
        timeoutMs: DEFRAG_TIMEOUT_MS
      });
      return DONE;
    }
    case "UpgradeMember":
      return upgradeMember(ctx, step2.name);
    case "StartRestore":
      return startRestore(ctx, ctx.restore, step2.name);
    case "FinishRestore":
      return finishRestore(ctx, step2.name);
    case "AddRootUser":
    case "GrantRootRole":
    case "EnableAuth":
    case "DisableAuth":
      return actAuth(step2, etcd(), ctx.auth, ctx.signal);
    case "RestartMember":
      await deleteIgnoringMissing(ctx, Pod, step2.name);
      return DONE;
    default:
      return { done: false, reason: step2.type, message: step2.message };
  }
}
function endpointsWithout(ctx, name) {
  const ip = name === void 0 ? void 0 : ctx.obs.pods.get(name)?.status?.podIP;
  const others = ctx.obs.endpoints.filter((e) => ip === void 0 || new URL(e).hostname !== ip);
  return others.length > 0 ? others : ctx.obs.endpoints;
}
async function startMember(ctx, name, state, initialCluster, claimOptions = {}) {
  const old = ctx.obs.pods.get(name);
  if (old !== void 0) {
    if (old.metadata.deletionTimestamp === void 0) await deleteIgnoringMissing(ctx, Pod, name);
    return {
      done: false,
      reason: "PodTerminating",
      message: `waiting for the old pod of ${name} to go away`
    };
  }
  const wait2 = await ctx.memberPending?.(name);
  if (wait2 !== void 0) return { done: false, ...wait2 };
  const { namespace } = clusterRef(ctx.cluster);
  const claim = memberDataClaim(ctx.cluster, name, claimOptions);
  if (claim !== void 0 && !ctx.obs.claims.has(name)) {
    await ctx.client.create(PersistentVolumeClaim, claim, ctx.signal === void 0 ? {} : { signal: ctx.signal }).catch(ignore(isAlreadyExists));
  }
  const pod = memberPod({
    cluster: ctx.cluster,
    member: name,
    initialCluster,
    initialClusterState: state
  });
  const extra = await ctx.beforePod?.(name) ?? {};
  const annotations = Object.keys(extra).length === 0 ? pod.metadata.annotations : { ...pod.metadata.annotations, ...extra };
  await ctx.client.create(Pod, {
    ...pod,
    metadata: { ...pod.metadata, namespace, ...annotations === void 0 ? {} : { annotations } }
  }).catch(ignore(isAlreadyExists));
  return DONE;
}
async function upgradeMember(ctx, name) {
  const pod = ctx.obs.pods.get(name);
  const image = etcdImage(ctx.cluster);
  if (pod === void 0) return { done: false, reason: "PodMissing", message: `member ${name} has no pod` };
  const index = pod.spec?.containers.findIndex((c) => c.name === "etcd") ?? -1;
  if (index < 0) throw new Error(`pod ${name} has no etcd container`);
  if (pod.spec?.containers[index]?.image === image) {
    return {
      done: false,
      reason: "MemberRestarting",
      message: `member ${name} is restarting on ${image}`
    };
  }
  await ctx.client.patch(
    Pod,
    name,
    clusterRef(ctx.cluster).namespace,
    [
      { op: "test", path: `/spec/containers/${index}/name`, value: "etcd" },
      { op: "replace", path: `/spec/containers/${index}/image`, value: image }
    ],
    "json",
    ctx.signal === void 0 ? {} : { signal: ctx.signal }
  );
  return DONE;
}
async function deleteMemberObjects(ctx, name, force = false) {
  await deleteIgnoringMissing(ctx, Pod, name, force ? { gracePeriodSeconds: 0 } : {});
  await deleteIgnoringMissing(ctx, PersistentVolumeClaim, dataClaimName(name));
}
async function deleteIgnoringMissing(ctx, kind, name, options = {}) {
  await ctx.client.delete(kind, name, clusterRef(ctx.cluster).namespace, {
    ...options,
    ...ctx.signal === void 0 ? {} : { signal: ctx.signal }
  }).catch(ignore(isNotFound));
}
function ignore(test) {
  return (err) => {
    if (!test(err)) throw err;
    return void 0;
  };
}

// src/reconcile/cluster/status.ts
function outageOf(obs, step2) {
  const { etcd, bootstrapped } = obs.observed;
  const existed = bootstrapped || step2.type === "StartMemberPod" && step2.reason === "PodMissing";
  if (!existed) return void 0;
  if (!etcd.reachable) return `no etcd member answers: ${etcd.error}`;
  const voters2 = etcd.members.filter((m) => !m.isLearner);
  const healthy = voters2.filter((m) => m.healthy).length;
  if (healthy >= quorum2(voters2.length)) return void 0;
  return `${healthy} of ${voters2.length} voting members are healthy, a quorum needs ${quorum2(voters2.length)}`;
}
function phaseOf(cluster, obs, step2) {
  if (cluster.spec.paused === true) return "Paused";
  if (step2.type === "QuorumLost") return "QuorumLost";
  if (step2.type === "Degraded") return "Degraded";
  if (outageOf(obs, step2) !== void 0) return "QuorumLost";
  if (step2.type === "InSync") return "Running";
  if (obs.clusterID === void 0 && cluster.status?.clusterID === void 0) return "Creating";
  let phase;
  switch (step2.type) {
    case "CreateSeed":
      return "Creating";
    case "AddLearner":
    case "PromoteLearner":
    case "RemoveMember":
      phase = "Scaling";
      break;
    case "UpgradeMember":
      phase = "Upgrading";
      break;
    case "RestartMember":
    case "AddRootUser":
    case "GrantRootRole":
    case "EnableAuth":
    case "DisableAuth":
      phase = "Updating";
      break;
    case "ReplaceMember":
    case "CleanupMember":
      phase = "Recovering";
      break;
    case "StartMemberPod":
      phase = step2.reason === "NotStarted" ? "Scaling" : "Recovering";
      break;
    default: {
      const members = obs.observed.etcd.reachable ? obs.observed.etcd.members : [];
      const target = parseEtcdVersion(cluster.spec.version);
      const outdated = members.some((m) => {
        const v2 = m.version === void 0 ? void 0 : parseEtcdVersion(m.version);
        return v2 !== void 0 && target !== void 0 && compareEtcdVersions(v2, target) !== 0;
      });
      if (step2.type === "Wait" && step2.reason === "LearnerCatchingUp") phase = "Scaling";
      else if (step2.type === "Wait" && step2.reason.startsWith("CARotation")) phase = "Updating";
      else if (members.length !== cluster.spec.replicas) phase = "Scaling";
      else if (outdated) phase = "Upgrading";
      else if (obs.observed.pods.some((p) => p.outdated === true)) phase = "Updating";
      else phase = step2.type === "MoveLeader" ? "Scaling" : "Recovering";
    }
  }
  const creating = (cluster.status?.phase ?? "Creating") === "Creating";
  const authStep = ["AddRootUser", "GrantRootRole", "EnableAuth"].includes(step2.type);
  return (phase === "Scaling" || authStep) && creating ? "Creating" : phase;
}
var UNCONFIRMED_REASONS = /* @__PURE__ */ new Set(["OperatorCutOff", "AuthFailed", "TLSFailed"]);
function conditionsOf(cluster, obs, step2, now) {
  const generation = cluster.metadata.generation ?? 0;
  const { etcd } = obs.observed;
  let conditions = cluster.status?.conditions ?? [];
  const set = (type, status, reason, message) => {
    conditions = setCondition(
      conditions,
      { type, status, reason, message, observedGeneration: generation },
      now
    );
  };
  const alarms2 = etcd.reachable ? etcd.alarms ?? [] : [];
  const unconfirmed = step2.type === "Degraded" && UNCONFIRMED_REASONS.has(step2.reason) && outageOf(obs, step2) !== void 0;
  if (unconfirmed) {
    set("Available", "Unknown", step2.reason, step2.message);
  } else if (alarms2.length > 0) {
    const raised = alarms2.map((a) => `${a.alarm} (${a.member})`).join(", ");
    set(
      "Available",
      "False",
      "Alarm",
      `etcd alarm raised: ${raised}; writes may be refused until it is disarmed`
    );
  } else if (!etcd.reachable) {
    const bootstrapped = obs.observed.bootstrapped;
    set(
      "Available",
      "False",
      bootstrapped ? "Unreachable" : "NotBootstrapped",
      bootstrapped ? `no etcd member answers: ${etcd.error}` : "the cluster is being bootstrapped"
    );
  } else {
    const voters2 = etcd.members.filter((m) => !m.isLearner);
    const healthy = voters2.filter((m) => m.healthy).length;
    if (healthy >= quorum2(voters2.length)) {
      set("Available", "True", "QuorumHealthy", `${healthy} of ${voters2.length} voting members are healthy`);
    } else {
      set(
        "Available",
        "False",
        "QuorumLost",
        `${healthy} of ${voters2.length} voting members are healthy, a quorum needs ${quorum2(voters2.length)}`
      );
    }
  }
  const outage = outageOf(obs, step2);
  const notDegraded = () => outage === void 0 ? set("Degraded", "False", "AsExpected", "") : set("Degraded", "True", "QuorumLost", `${outage}; nothing is removed until a quorum is back`);
  switch (step2.type) {
    case "InSync":
      set("Progressing", "False", "InSync", step2.message);
      set("Degraded", "False", "AsExpected", "");
      break;
    case "Degraded":
      set("Progressing", "False", step2.reason, step2.message);
      set("Degraded", "True", step2.reason, step2.message);
      break;
    case "QuorumLost":
      set("Progressing", "False", "QuorumLost", step2.message);
      set("Degraded", "True", "QuorumLost", step2.message);
      break;
    case "Wait":
      if (step2.reason === "Paused") set("Progressing", "False", "Paused", step2.message);
      else set("Progressing", "True", step2.reason, step2.message);
      notDegraded();
      break;
    default:
      set("Progressing", "True", step2.type, step2.message);
      notDegraded();
  }
  return conditions;
}
function statusOf(cluster, obs, step2, now) {
  const previous = cluster.status ?? {};
  const { etcd } = obs.observed;
  const live = [...obs.pods.values()].filter((p) => !podGone(p));
  const members = etcd.reachable ? obs.memberStatus : (previous.members ?? []).map((m) => ({ ...m, healthy: false, leader: false }));
  const versions = members.map((m) => m.version === void 0 ? void 0 : parseEtcdVersion(m.version)).filter((v2) => v2 !== void 0).sort(compareEtcdVersions);
  const lowest = versions[0];
  const leader = members.find((m) => m.leader)?.name;
  const clusterID = previous.clusterID ?? obs.clusterID;
  const currentVersion = lowest === void 0 ? previous.currentVersion : formatEtcdVersion(lowest);
  const authEnabled = obs.observed.auth?.enabled;
  const auth = authEnabled === void 0 ? previous.auth : authEnabled ? "Enabled" : "Disabled";
  return {
    observedGeneration: cluster.metadata.generation ?? 0,
    phase: phaseOf(cluster, obs, step2),
    conditions: conditionsOf(cluster, obs, step2, now),
    replicas: etcd.reachable ? members.length : live.length,
    readyReplicas: live.filter(podReady).length,
    members,
    ...leader === void 0 ? {} : { leader },
    ...currentVersion === void 0 ? {} : { currentVersion },
    ...clusterID === void 0 ? {} : { clusterID },
    ...auth === void 0 ? {} : { auth },
    selector: selectorString(cluster),
    clientEndpoint: clientEndpoint(cluster)
  };
}

// src/reconcile/restore/recovery.ts
var SURVIVOR_ANNOTATION = "etcd.capstan.dev/restore-survivor";
var RECOVERY_PHASE_ANNOTATION = "etcd.capstan.dev/restore-phase";
async function activeRestore(cluster, cache) {
  const { namespace, name } = clusterRef(cluster);
  const all = await cache.list(EtcdRestoreKind, { namespace });
  return oldestOpenRequest(all, (r) => r.spec.clusterName === name && !restoreEnded(r.status?.phase));
}
async function observeRecoveryMembers(cluster, request2, cache, obs, etcdClient, signal, tls) {
  const { namespace } = clusterRef(cluster);
  const kept = await cache.list(PersistentVolumeClaim, {
    namespace,
    labels: { ...selectorLabels(cluster), [KEPT_BY_RESTORE_LABEL]: request2 }
  });
  const keptNames = new Set(
    kept.map((c) => c.metadata.labels?.[MEMBER_LABEL]).filter((n) => n !== void 0)
  );
  const names2 = [.../* @__PURE__ */ new Set([...obs.claims.keys(), ...keptNames, ...obs.pods.keys()])].sort();
  const call = signal === void 0 ? {} : { signal };
  return Promise.all(
    names2.map(async (name) => {
      const claim = obs.claims.get(name);
      const pod = obs.pods.get(name);
      const live = pod !== void 0 && !podGone(pod);
      const ip = live ? pod.status?.podIP : void 0;
      const deleting2 = pod?.metadata.deletionTimestamp;
      const node = pod?.spec?.nodeName;
      const member = {
        name,
        claimOwned: claim !== void 0,
        pod: live,
        // A pod being deleted is not gone (plan/fence.ts): its etcd may still run behind a partition.
        ...deleting2 === void 0 ? {} : { terminating: { since: new Date(deleting2), ...node === void 0 ? {} : { node } } },
        ...pod !== void 0 && deleting2 === void 0 && !live ? { podEnded: true } : {},
        ...keptNames.has(name) ? { claimKept: true } : {},
        ...claim?.metadata.annotations?.[SURVIVOR_ANNOTATION] === request2 ? { survivorMark: true } : {},
        ...live && pod.metadata.annotations?.[FORCE_NEW_CLUSTER_ANNOTATION] === request2 ? { forceNewCluster: true } : {}
      };
      const phase = claim?.metadata.annotations?.[RECOVERY_PHASE_ANNOTATION];
      if (member.survivorMark === true && (phase === "force" || phase === "unforce"))
        member.recoveryPhase = phase;
      if (ip === void 0) return member;
      const endpoint = `${clientScheme(cluster)}://${ip}:${CLIENT_PORT}`;
      const client = etcdClient([endpoint], tls);
      const [status, list, health] = await Promise.all([
        client.status(endpoint, call).catch(() => void 0),
        client.memberList(call).catch(() => void 0),
        client.health(endpoint, call).catch(() => void 0)
      ]);
      const self = status === void 0 ? void 0 : list?.members.find((x2) => x2.id === status.memberId);
      const learners2 = (list?.members ?? []).filter((x2) => x2.isLearner && x2.id !== status?.memberId).map((x2) => ({ id: x2.id, name: x2.name }));
      return {
        ...member,
        ...status?.isLearner === true || self?.isLearner === true ? { learner: true } : {},
        ...list === void 0 ? {} : { learnersListed: learners2 },
        ...status === void 0 ? {} : {
          status: {
            raftIndex: status.raftIndex,
            revision: status.header.revision,
            clusterID: memberIdToHex(status.header.clusterId)
          }
        },
        ...list === void 0 ? {} : { membersListed: list.members.length },
        healthy: health?.healthy === true
      };
    })
  );
}
function hasQuorum(obs) {
  const { etcd } = obs.observed;
  if (!etcd.reachable) return false;
  const voters2 = etcd.members.filter((m) => !m.isLearner);
  return voters2.length > 0 && voters2.filter((m) => m.healthy).length >= quorum2(voters2.length);
}
function observedRequest(restore, obs, members, backup) {
  const judged = judgeQuorum(obs.observed);
  return {
    request: restore.metadata.name ?? "",
    from: restore.spec.from,
    quorum: hasQuorum(obs),
    ...judged.state === "Unconfirmed" ? { unconfirmed: { reason: judged.reason, message: judged.message } } : {},
    members,
    ...backup === void 0 ? {} : { backup: backup.planned },
    ...restore.metadata.deletionTimestamp === void 0 ? {} : { deleting: true },
    ...hasFinalizer(restore, RECOVERY_FINALIZER) ? { finalizer: true } : {}
  };
}
var STATUS_ONLY = /* @__PURE__ */ new Set(["Wait", "Refuse", "Recovered", "CallOff"]);
async function releaseRestores(ctx, namespace, clusterName, all = false) {
  const released = [];
  for (const r of await ctx.cache.list(EtcdRestoreKind, { namespace })) {
    if (r.spec.clusterName !== clusterName || !hasFinalizer(r, RECOVERY_FINALIZER)) continue;
    if (!all && !restoreEnded(r.status?.phase)) continue;
    await removeFinalizer(ctx.client, EtcdRestoreKind, r, RECOVERY_FINALIZER);
    released.push(r.metadata.name ?? "");
  }
  return released;
}
function recoverySuffix(restore) {
  const digest = createHash3("sha256").update(restore.metadata.uid ?? `${restore.metadata.namespace}/${restore.metadata.name}`).digest();
  const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789";
  return Array.from(digest.subarray(0, 5), (b2) => alphabet[b2 % alphabet.length]).join("");
}
function recoverySeedName(cluster, restore) {
  return memberName(cluster, recoverySuffix(restore));
}
function recoveryJobName(cluster, restore) {
  return `${clusterRef(cluster).name}-dr-${recoverySuffix(restore)}`;
}
async function observeBackupRecovery(cluster, restore, cache, obs, operatorImage) {
  const source = restore.spec.source;
  if (restore.spec.from !== "Backup" || source === void 0) return void 0;
  const withSource = { ...cluster, spec: { ...cluster.spec, bootstrap: { restore: source } } };
  const jobName = recoveryJobName(cluster, restore);
  const request2 = restore.metadata.name ?? "";
  const observation = await observeRestore(withSource, cache, obs.claims, operatorImage, {
    jobName,
    name: request2
  });
  if (observation === void 0) return void 0;
  return {
    planned: {
      spec: withSource.spec,
      seed: recoverySeedName(cluster, restore),
      source: restoreSourceName(source),
      restore: observation.observed
    },
    cluster: withSource,
    observation,
    jobName,
    bumpRevision: source.bumpRevision ?? DEFAULT_BUMP_REVISION
  };
}
async function actRecovery(step2, ctx, restore, now, backup) {
  const { namespace } = clusterRef(ctx.cluster);
  const request2 = restore.metadata.name ?? "";
  const call = ctx.signal === void 0 ? {} : { signal: ctx.signal };
  const patchClaim = (name, metadata) => ctx.client.patch(PersistentVolumeClaim, dataClaimName(name), namespace, { metadata }, "merge", call);
  const deletePod = (name) => ctx.client.delete(Pod, name, namespace, call).catch(ignoreNotFound);
  const started = restore.status?.startTime ?? now.toISOString();
  switch (step2.type) {
    case "Refuse":
      return { phase: "Failed", message: step2.message, completionTime: now.toISOString() };
    case "MarkSurvivor":
      await patchClaim(step2.name, { annotations: { [SURVIVOR_ANNOTATION]: request2 } });
      return {
        phase: "Running",
        message: step2.message,
        survivor: step2.name,
        raftIndex: step2.raftIndex,
        startTime: started
      };
    case "KeepClaim":
      await patchClaim(step2.name, {
        labels: { [KEPT_BY_RESTORE_LABEL]: request2, [CLAIM_UID_LABEL]: null },
        ownerReferences: null
      });
      return {
        phase: "Running",
        message: step2.message,
        startTime: started,
        keptClaims: [.../* @__PURE__ */ new Set([...restore.status?.keptClaims ?? [], dataClaimName(step2.name)])].sort()
      };
    case "StopMember":
      await deletePod(step2.name);
      return { phase: "Running", message: step2.message, startTime: started };
    case "GiveBackClaim": {
      const policy = ctx.cluster.spec.storage.whenDeleted ?? "Retain";
      const owned2 = claimRetentionPatch(
        ctx.cluster,
        EtcdClusterKind,
        { metadata: {} },
        policy,
        CLAIM_UID_LABEL
      );
      await patchClaim(step2.name, {
        ...owned2?.metadata,
        labels: { [KEPT_BY_RESTORE_LABEL]: null, [CLAIM_UID_LABEL]: ctx.cluster.metadata.uid ?? null }
      });
      const claim = dataClaimName(step2.name);
      return {
        phase: "Running",
        message: step2.message,
        startTime: started,
        keptClaims: (restore.status?.keptClaims ?? []).filter((c) => c !== claim)
      };
    }
    case "RemoveSurvivorMark":
      await patchClaim(step2.name, { annotations: { [SURVIVOR_ANNOTATION]: null } });
      return { phase: "Running", message: step2.message, startTime: started };
    case "CallOff":
      return { phase: "Cancelled", message: step2.message, completionTime: now.toISOString() };
    case "RemoveLearner": {
      const ip = ctx.obs.pods.get(step2.name)?.status?.podIP;
      if (ip === void 0 || ctx.etcdClient === void 0) {
        return {
          phase: "Running",
          message: `${step2.message}: ${step2.name} has no address yet`,
          startTime: started
        };
      }
      const endpoint = `${clientScheme(ctx.cluster)}://${ip}:${CLIENT_PORT}`;
      await ctx.etcdClient([endpoint], ctx.tls, ctx.auth).memberRemove(step2.memberId, call);
      return { phase: "Running", message: step2.message, startTime: started };
    }
    case "ForceNewCluster":
    case "RemoveForceFlag":
      await patchClaim(step2.name, {
        annotations: { [RECOVERY_PHASE_ANNOTATION]: step2.type === "ForceNewCluster" ? "force" : "unforce" }
      });
      await deletePod(step2.name);
      return { phase: "Running", message: step2.message, startTime: started };
    case "StartSurvivor": {
      if (ctx.obs.pods.has(step2.name)) {
        const old = ctx.obs.pods.get(step2.name);
        if (old?.metadata.deletionTimestamp === void 0) await deletePod(step2.name);
        return {
          phase: "Running",
          message: `waiting for the old pod of ${step2.name} to go away`,
          startTime: started
        };
      }
      const pod = memberPod({
        cluster: ctx.cluster,
        member: step2.name,
        initialCluster: [{ name: step2.name, peerURL: peerURL(ctx.cluster, step2.name) }],
        initialClusterState: "existing"
      });
      await ctx.client.create(Pod, step2.forceNewCluster ? withForceNewCluster(pod, request2) : pod, call);
      return { phase: "Running", message: step2.message, startTime: started };
    }
    case "Recovered":
      return {
        phase: "Succeeded",
        message: step2.message,
        ...step2.survivor === void 0 ? {} : { survivor: step2.survivor },
        ...step2.seed === void 0 ? {} : { seed: step2.seed },
        ...step2.source === void 0 ? {} : { source: step2.source },
        ...step2.snapshotRevision === void 0 ? {} : { snapshotRevision: step2.snapshotRevision },
        revision: step2.revision,
        clusterID: step2.clusterID,
        startTime: started,
        completionTime: now.toISOString()
      };
    case "StartRestore":
    case "FinishRestore":
    case "StartSeed": {
      const running2 = {
        phase: "Running",
        startTime: started,
        ...backup === void 0 ? {} : { source: backup.planned.source, seed: backup.planned.seed },
        ...backup?.planned.restore.backup?.revision === void 0 ? {} : { snapshotRevision: backup.planned.restore.backup.revision }
      };
      if (backup === void 0) {
        return { ...running2, message: `${step2.type}: the backup was not observed; trying again` };
      }
      const restoreCtx = { ...ctx, cluster: backup.cluster };
      const result = step2.type === "StartRestore" ? await startRestore(restoreCtx, backup.observation, step2.name, {
        jobName: backup.jobName,
        bumpRevision: backup.bumpRevision,
        claimAnnotations: { [RESTORE_REQUEST_ANNOTATION]: request2 }
      }) : step2.type === "FinishRestore" ? await finishRestore(restoreCtx, step2.name, now) : await act({ type: "CreateSeed", name: step2.name, message: step2.message }, restoreCtx);
      return { ...running2, message: result.done ? step2.message : result.message };
    }
    case "Wait":
      return { phase: "Running", message: step2.message, startTime: started };
  }
}
function ignoreNotFound(err) {
  if (!isNotFound(err)) throw err;
  return void 0;
}
async function reconcileRecovery(ctx, cluster, obs, restore, etcdClient, tls, options = {}) {
  const { namespace, name } = clusterRef(cluster);
  const request2 = restore.metadata.name ?? "";
  const members = await observeRecoveryMembers(cluster, request2, ctx.cache, obs, etcdClient, ctx.signal, tls);
  const backup = await observeBackupRecovery(cluster, restore, ctx.cache, obs, options.operatorImage);
  const observed = observedRequest(restore, obs, members, backup);
  const step2 = planRecovery(observed);
  const deleting2 = restore.metadata.deletionTimestamp !== void 0;
  if (!STATUS_ONLY.has(step2.type) && !deleting2 && !hasFinalizer(restore, RECOVERY_FINALIZER)) {
    await addFinalizer(ctx.client, EtcdRestoreKind, restore, RECOVERY_FINALIZER);
  }
  const now = /* @__PURE__ */ new Date();
  const fields = await actRecovery(
    step2,
    {
      client: ctx.client,
      cluster,
      obs,
      etcdClient,
      signal: ctx.signal,
      ...tls === void 0 ? {} : { tls },
      ...options.beforePod === void 0 ? {} : { beforePod: options.beforePod },
      ...options.memberPending === void 0 ? {} : { memberPending: options.memberPending }
    },
    restore,
    now,
    backup
  );
  if (step2.type !== "Wait") {
    const warning = step2.type === "Refuse";
    ctx.log.info({ restore: request2, step: step2.type }, step2.message);
    ctx.recorder.event(restore, warning ? "Warning" : "Normal", step2.type, "Recover", step2.message);
    if (step2.type === "Recovered" || step2.type === "CallOff" || warning) {
      ctx.recorder.event(cluster, warning ? "Warning" : "Normal", step2.type, "Recover", step2.message);
    }
  }
  const held = restoreEnded(fields.phase) ? void 0 : deletionHeld(observed);
  if (held !== void 0) {
    fields.message = `${fields.message ?? step2.message}; ${held}`;
    if (restore.status?.message?.includes(held) !== true) {
      ctx.log.warn({ restore: request2 }, held);
      ctx.recorder.event(restore, "Warning", "DeletionHeld", "Recover", held);
    }
  }
  const reason = step2.type === "Wait" && step2.reason === "WaitingForFence" ? step2.reason : `Restore${step2.type}`;
  const shown = step2.type === "Refuse" || step2.type === "Recovered" ? { type: "Wait", reason, message: step2.message } : { type: "Wait", reason, message: `EtcdRestore ${request2}: ${step2.message}` };
  const clusterStatus = statusOf(cluster, obs, shown, now);
  if (step2.type === "Recovered" && step2.seed !== void 0 && backup !== void 0) {
    clusterStatus.clusterID = step2.clusterID;
    clusterStatus.restore = recoveredStatus(step2, backup, cluster.status?.restore, now);
  }
  const clusterPatch = statusMergePatch(cluster.status, clusterStatus);
  if (clusterPatch !== void 0) {
    await ctx.client.patchStatus(EtcdClusterKind, name, namespace, clusterPatch, "merge", {
      signal: ctx.signal
    });
  }
  const restorePatch = statusMergePatch(restore.status, { ...restore.status, ...fields });
  if (restorePatch !== void 0) {
    await ctx.client.patchStatus(EtcdRestoreKind, request2, namespace, restorePatch, "merge", {
      signal: ctx.signal
    });
  }
  if (restoreEnded(fields.phase))
    await removeFinalizer(ctx.client, EtcdRestoreKind, restore, RECOVERY_FINALIZER);
  return { requeueAfter: step2.type === "Wait" ? 5e3 : 1e3 };
}
function recoveredStatus(step2, backup, previous, now) {
  if (previous !== void 0 && previous.clusterID === step2.clusterID) return previous;
  return {
    source: backup.planned.source,
    ...step2.snapshotRevision === void 0 ? { revision: step2.revision } : { snapshotRevision: step2.snapshotRevision, revision: step2.snapshotRevision + backup.bumpRevision },
    bumpRevision: backup.bumpRevision,
    completionTime: now.toISOString(),
    clusterID: step2.clusterID
  };
}

// src/reconcile/restore/automatic-recovery.ts
function automaticRestoreName(cluster, since) {
  const digest = createHash4("sha256").update(`${cluster.metadata.uid ?? ""}/${since.toISOString()}`).digest();
  const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789";
  const suffix = Array.from(digest.subarray(0, 5), (b2) => alphabet[b2 % alphabet.length]).join("");
  return `${clusterRef(cluster).name}-auto-${suffix}`;
}
function automaticRestore(cluster, name, source) {
  const { namespace, name: clusterName } = clusterRef(cluster);
  return {
    apiVersion: EtcdRestoreKind.apiVersion,
    kind: EtcdRestoreKind.kind,
    metadata: { name, namespace, labels: { [AUTOMATIC_RESTORE_LABEL]: clusterName } },
    spec: source.from === "Survivor" ? { clusterName, from: "Survivor" } : { clusterName, from: "Backup", source: { backup: { name: source.backup } } }
  };
}
async function reconcileAutomaticRecovery(ctx, cluster, obs, now, options = {}) {
  const { namespace, name } = clusterRef(cluster);
  const automatic = cluster.spec.recovery?.automatic;
  const judged = judgeQuorum(obs.observed);
  const quorum3 = judged.state === "Healthy";
  const unconfirmed = judged.state === "Unconfirmed" ? judged : void 0;
  const bootstrapped = cluster.status?.clusterID !== void 0;
  if (quorum3 || !bootstrapped || unconfirmed !== void 0) return { type: "None" };
  const recorded = cluster.status?.quorumLostSince;
  const lostSince = recorded === void 0 ? void 0 : new Date(recorded);
  const restores = (await ctx.cache.list(EtcdRestoreKind, { namespace })).filter((r) => r.spec.clusterName === name).map((r) => ({
    name: r.metadata.name ?? "",
    ...r.status?.phase === void 0 ? {} : { phase: r.status.phase },
    automatic: r.metadata.labels?.[AUTOMATIC_RESTORE_LABEL] === name
  }));
  const allBackups = await ctx.cache.list(EtcdBackupKind, { namespace });
  const backups = allBackups.filter((b2) => b2.spec.clusterName === name).map((b2) => ({
    name: b2.metadata.name ?? "",
    ...b2.status?.phase === void 0 ? {} : { phase: b2.status.phase },
    ...b2.status?.completionTime === void 0 ? {} : { completionTime: new Date(b2.status.completionTime) },
    ...b2.status?.clusterID === void 0 ? {} : { clusterID: b2.status.clusterID },
    ...b2.status?.revision === void 0 ? {} : { revision: b2.status.revision }
  }));
  const restoredFrom = /^backup\/(.+)$/.exec(cluster.status?.restore?.source ?? "")?.[1];
  const clusterIDs = [
    cluster.status?.clusterID,
    allBackups.find((b2) => b2.metadata.name === restoredFrom)?.status?.clusterID
  ].filter((id) => id !== void 0 && id !== "");
  const observed = {
    enabled: automatic?.enabled === true,
    afterSeconds: automatic?.afterSeconds ?? DEFAULT_AUTOMATIC_AFTER_SECONDS,
    ...options.floorSeconds === void 0 ? {} : { floorSeconds: options.floorSeconds },
    terminating: obs.observed.terminating ?? [],
    paused: cluster.spec.paused === true,
    bootstrapped,
    quorum: quorum3,
    ...lostSince === void 0 || Number.isNaN(lostSince.getTime()) ? {} : { lostSince },
    now,
    restores,
    backups,
    clusterIDs,
    nameFor: (since) => automaticRestoreName(cluster, since)
  };
  let decision = planAutomaticRecovery(observed);
  if ((decision.type === "CreateRestore" || decision.type === "NoBackup") && options.etcdClient !== void 0) {
    const members = await observeRecoveryMembers(
      cluster,
      "",
      ctx.cache,
      obs,
      options.etcdClient,
      ctx.signal,
      options.tls
    );
    decision = planAutomaticRecovery({ ...observed, survivors: members });
  }
  if (decision.type === "CreateRestore") {
    const source = decision.from === "Survivor" ? { from: "Survivor" } : { from: "Backup", backup: decision.backup };
    await ctx.client.create(EtcdRestoreKind, automaticRestore(cluster, decision.name, source), {
      signal: ctx.signal
    }).catch((err) => {
      if (!isAlreadyExists(err)) throw err;
    });
    ctx.log.warn(
      {
        restore: decision.name,
        ...decision.from === "Survivor" ? { survivor: decision.survivor } : { backup: decision.backup }
      },
      decision.message
    );
    ctx.recorder.event(cluster, "Warning", "AutomaticRecovery", "Recover", decision.message);
  }
  return decision;
}

// src/reconcile/restore/restore-index.ts
var RESTORE_BACKUP_INDEX = "etcd.capstan.dev/restore-backup";
function restoreBackupKeys(cluster) {
  const name = cluster.spec?.bootstrap?.restore?.backup?.name;
  return name === void 0 ? [] : [`${cluster.metadata.namespace ?? ""}/${name}`];
}
var RestoringClusters = class {
  informer;
  /** Indexes `informer`'s clusters (the controller's own EtcdCluster informer, when it is bound). */
  attach(informer) {
    informer.addIndexer(RESTORE_BACKUP_INDEX, restoreBackupKeys);
    this.informer = informer;
  }
  /** The clusters whose spec.bootstrap.restore names `backup`. */
  of = (backup) => {
    if (this.informer === void 0) {
      throw new Error(
        "RestoringClusters: not attached to the EtcdCluster informer (the controller was not bound)"
      );
    }
    const key = `${backup.metadata.namespace ?? ""}/${backup.metadata.name ?? ""}`;
    return this.informer.store.byIndex(RESTORE_BACKUP_INDEX, key).map((c) => ({
      namespace: c.metadata.namespace ?? "",
      name: c.metadata.name ?? ""
    }));
  };
};

// src/plan/certificate-expiry.ts
var EXPIRY_WARNING_MS = 14 * 864e5;
var CERTIFICATES_CONDITION = "CertificatesValid";
function warningWindowMs(cert, thresholdMs = EXPIRY_WARNING_MS) {
  const lifetime = Math.max(0, cert.notAfter.getTime() - cert.notBefore.getTime());
  const automatic = cert.renewer === "operator" || cert.renewer === "cert-manager";
  const own = automatic ? (cert.renewBeforeMs ?? lifetime / 3) / 2 : lifetime / 3;
  return Math.min(thresholdMs, own);
}
function remedy(namespace, cert) {
  switch (cert.renewer) {
    case "user":
      return `the operator does not renew it: put a renewed certificate into Secret ${namespace}/${cert.secret} (members serve it at their next handshake; a new CA needs each member restarted, one at a time)`;
    case "cert-manager":
      return `cert-manager has not renewed it: check Certificate ${namespace}/${cert.certificate ?? cert.secret} (kubectl describe certificate) and ${cert.issuer ?? "its issuer"}`;
    case "issuer":
      return `it is the CA of ${cert.issuer ?? "the cert-manager issuer"}: renew that CA, then have cert-manager issue Certificate ${namespace}/${cert.certificate ?? cert.secret} again (cmctl renew) so its Secret carries the new one, and restart the members one at a time`;
    case "operator":
      return "the operator has not renewed it: see its logs and the cluster's Events";
  }
}
function named(namespace, cert) {
  return `the certificate in Secret ${namespace}/${cert.secret}, key ${cert.key} (${cert.field})`;
}
function judgeCertificates(certs, namespace, now, thresholdMs = EXPIRY_WARNING_MS) {
  const t = now.getTime();
  const byExpiry = [...certs].sort(
    (a, b2) => a.notAfter.getTime() - b2.notAfter.getTime() || compare(a.secret, b2.secret) || compare(a.key, b2.key)
  );
  const expired = byExpiry.filter((c) => c.notAfter.getTime() <= t);
  const expiring = byExpiry.filter(
    (c) => c.notAfter.getTime() > t && c.notAfter.getTime() - t < warningWindowMs(c, thresholdMs)
  );
  const first = expired[0] ?? expiring[0];
  if (first === void 0) {
    const earliest = byExpiry[0];
    return {
      status: "True",
      reason: "CertificatesValid",
      message: earliest === void 0 ? "no certificate to check" : `every certificate is valid beyond its warning window; the first to expire is ${named(namespace, earliest)}, at ${earliest.notAfter.toISOString()}`,
      expiring: []
    };
  }
  const found = [...expired, ...expiring];
  const verb = first.notAfter.getTime() <= t ? "expired" : "expires";
  const others = found.slice(1).map(
    (c) => `Secret ${c.secret} key ${c.key} (${c.notAfter.getTime() <= t ? "expired" : "expires"} at ${c.notAfter.toISOString()})`
  );
  return {
    status: "False",
    reason: expired.length > 0 ? "CertificateExpired" : "CertificateExpiring",
    message: `${named(namespace, first)} ${verb} at ${first.notAfter.toISOString()}: ${remedy(namespace, first)}${others.length === 0 ? "" : `; also ${others.join(", ")}`}`,
    expiring: found
  };
}
function compare(a, b2) {
  return a < b2 ? -1 : a > b2 ? 1 : 0;
}
function validityOf(key, data) {
  const chain = pems(data["tls.crt"]);
  if (key === "tls.crt") {
    const infos2 = chain.map(certificateInfo).filter((i3) => i3 !== void 0);
    return pick(infos2, (a, b2) => a.notAfter.getTime() < b2.notAfter.getTime());
  }
  const cas = pems(data["ca.crt"]);
  const signing = cas.filter((ca) => chain.some((c) => signedBy(c, ca)));
  const infos = (signing.length > 0 ? signing : cas).map(certificateInfo).filter((i3) => i3 !== void 0);
  return pick(infos, (a, b2) => a.notAfter.getTime() > b2.notAfter.getTime());
}
function pems(text) {
  if (text === void 0 || text === "") return [];
  const split = splitPemBundle(text);
  return split.length > 0 ? split : [text];
}
function pick(infos, better) {
  let best;
  for (const i3 of infos) if (best === void 0 || better(i3, best)) best = i3;
  return best === void 0 ? void 0 : { notBefore: best.notBefore, notAfter: best.notAfter };
}

// src/reconcile/cluster/certificate-expiry.ts
function renewerOf(cert, key) {
  switch (cert.source) {
    case "operatorManaged":
      return "operator";
    case "certManager":
      return key === "tls.crt" ? "cert-manager" : "issuer";
    case "secretRef":
      return "user";
  }
}
function usedCertificates(inUse) {
  const out = [];
  for (const cert of inUse) {
    for (const key of cert.keys) {
      const validity = validityOf(key, cert.data);
      if (validity === void 0) continue;
      const renewer = renewerOf(cert, key);
      out.push({
        secret: cert.secret,
        key,
        field: cert.field,
        source: cert.source,
        renewer,
        ...renewer === "operator" || renewer === "cert-manager" ? cert.renewBeforeMs === void 0 ? {} : { renewBeforeMs: cert.renewBeforeMs } : {},
        ...cert.certificate === void 0 ? {} : { certificate: cert.certificate },
        ...cert.issuer === void 0 ? {} : { issuer: cert.issuer },
        ...validity
      });
    }
  }
  return out;
}
function judgeClusterCertificates(cluster, tls, metrics2, now) {
  const { namespace, name } = clusterRef(cluster);
  if (peerTLS(cluster) === void 0 && clientTLS(cluster) === void 0) {
    metrics2.certificatesObserved(namespace, name, []);
    return void 0;
  }
  const certs = usedCertificates(tls.inUse());
  metrics2.certificatesObserved(
    namespace,
    name,
    certs.map((c) => ({ ...c, warnFrom: new Date(c.notAfter.getTime() - warningWindowMs(c)) }))
  );
  return judgeCertificates(certs, namespace, now);
}
function withCertificatesCondition(ctx, cluster, conditions, verdict, now) {
  if (verdict === void 0) return removeCondition(conditions, CERTIFICATES_CONDITION);
  const before = findCondition(cluster.status?.conditions, CERTIFICATES_CONDITION);
  if (verdict.status === "False") {
    if (before?.status !== "False" || before.reason !== verdict.reason || before.message !== verdict.message) {
      ctx.log.warn({ reason: verdict.reason }, verdict.message);
      ctx.recorder.event(cluster, "Warning", verdict.reason, "Certificates", verdict.message);
    }
  } else if (before?.status === "False") {
    const message = `certificates renewed: ${verdict.message}`;
    ctx.log.info({ reason: "CertificatesRenewed" }, message);
    ctx.recorder.event(cluster, "Normal", "CertificatesRenewed", "Certificates", message);
  }
  return setCondition(
    conditions,
    {
      type: CERTIFICATES_CONDITION,
      status: verdict.status,
      reason: verdict.reason,
      message: verdict.message,
      observedGeneration: cluster.metadata.generation ?? 0
    },
    now
  );
}

// src/reconcile/cluster/controller.ts
var FIELD_MANAGER2 = "capstan-etcd-operator";
var REQUEUE = {
  /** After a step: soon, to take the next one once the informers have seen this one. */
  afterStep: 1e3,
  /** Waiting for something that is moving (a pod starting, a learner catching up). */
  waiting: 5e3,
  /** Quorum lost: watch for it to come back. */
  quorumLost: 1e4,
  /** In sync: etcd's health is not in any Kubernetes object, so it is polled (no API writes). */
  inSync: 3e4,
  /** Refused spec: nothing changes until the spec does (a spec edit triggers a reconcile at once). */
  degraded: 6e4
};
var DEFAULT_BACKUP_IMAGE = "ghcr.io/capstan-dev/capstan/etcd-operator:0.1.0";
function etcdClusterCacheSelectors() {
  return managedBySelectors(MANAGED_BY, [
    Pod,
    PersistentVolumeClaim,
    Service,
    PodDisruptionBudget,
    Job,
    NetworkPolicy
  ]);
}
function randomSuffix() {
  const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789";
  return Array.from({ length: 5 }, () => alphabet[randomInt(alphabet.length)]).join("");
}
var EtcdClusterController = class extends Controller {
  restoring;
  constructor(options, restoring) {
    super(options);
    this.restoring = restoring;
  }
  bind(env) {
    super.bind(env);
    this.restoring.attach(
      env.informers.informerFor(EtcdClusterKind, env.namespace ? { namespace: env.namespace } : {})
    );
  }
};
function etcdClusterController(options) {
  const restoring = new RestoringClusters();
  return new EtcdClusterController(
    {
      name: "etcdcluster",
      for: EtcdClusterKind,
      owns: [Pod, Service, PodDisruptionBudget, Job, NetworkPolicy],
      watches: [
        // Members' claims kept when the cluster is deleted (storage.whenDeleted Retain) have no owner reference:
        // their events reach the cluster their label names (owned ones carry it too).
        watch(PersistentVolumeClaim, requestFromLabel(CLUSTER_LABEL)),
        // An EtcdRestore is acted on by its cluster's reconcile (one writer of the member pods).
        watch(EtcdRestoreKind, (r) => [{ namespace: r.metadata.namespace ?? "", name: r.spec.clusterName }]),
        // A cluster restoring from a backup starts as soon as the backup succeeds (not at its next requeue).
        watch(EtcdBackupKind, restoring.of)
      ],
      // Our own status writes do not trigger a reconcile; spec edits, creation and deletion do, and the
      // rotate-ca annotation (a CA rotation asked for).
      predicates: [or(generationChanged(), annotationsChanged())],
      maxConcurrentReconciles: options.maxConcurrentReconciles ?? 4,
      reconcile: options.reconcile ?? ((req, ctx) => reconcileEtcdCluster(req, ctx, options))
    },
    restoring
  );
}
async function reconcileEtcdCluster(req, ctx, options) {
  const cluster = await ctx.cache.get(EtcdClusterKind, req.name, req.namespace);
  if (cluster === void 0 || cluster.metadata.deletionTimestamp !== void 0) {
    for (const name of await releaseRestores(ctx, req.namespace ?? "", req.name, true))
      ctx.log.info({ restore: name }, "recovery finalizer released: the EtcdCluster is gone");
    options.metrics.forget(req.namespace ?? "", req.name);
    return void 0;
  }
  const signal = ctx.signal;
  await applyServices(ctx, cluster);
  await applyNetworkPolicy(ctx, cluster, options.operatorPods);
  const tls = await prepareTLS(ctx.client, cluster, /* @__PURE__ */ new Date(), signal);
  const clientTLS2 = isTLSProblem(tls) ? void 0 : tls.client;
  const auth = await prepareAuth(ctx.client, cluster, { create: true, signal });
  if (auth.created !== void 0) {
    ctx.log.info({ secret: auth.created }, auth.created);
    ctx.recorder.event(cluster, "Normal", "RootSecretCreated", "Auth", auth.created);
  }
  const credentials = auth.credentials;
  const etcdClient = options.etcdClient ?? defaultEtcdClient;
  const obs = await observe(cluster, ctx.cache, etcdClient, signal, clientTLS2, credentials);
  const whenDeleted = cluster.spec.storage.whenDeleted ?? "Retain";
  const claims = cluster.spec.paused === true ? [] : obs.claims.values();
  for (const claim of await applyClaimRetention(
    ctx.client,
    cluster,
    EtcdClusterKind,
    claims,
    whenDeleted,
    CLAIM_UID_LABEL,
    signal
  ))
    ctx.log.info({ claim, whenDeleted }, "data claim set to storage.whenDeleted");
  if (!isTLSProblem(tls)) await refreshCertificates(ctx, cluster, obs, tls);
  await releaseRestores(ctx, clusterRef(cluster).namespace, clusterRef(cluster).name);
  const certificates = isTLSProblem(tls) ? void 0 : { verdict: judgeClusterCertificates(cluster, tls, options.metrics, /* @__PURE__ */ new Date()) };
  const withCredentials = (e, t) => etcdClient(e, t, credentials);
  const recovery = await activeRestore(cluster, ctx.cache);
  if (recovery !== void 0) {
    return reconcileRecovery(ctx, cluster, obs, recovery, withCredentials, clientTLS2, {
      ...options.operatorImage === void 0 ? {} : { operatorImage: options.operatorImage },
      ...podHooks(tls)
    });
  }
  const restore = await observeRestore(cluster, ctx.cache, obs.claims, options.operatorImage);
  if (restore !== void 0) obs.observed.restore = restore.observed;
  await applyDisruptionBudget(ctx, cluster, votersOf(cluster, obs));
  recordMetrics(options.metrics, cluster, obs);
  const tlsVerdict = isTLSProblem(tls) ? tls : void 0;
  const recordedLoss = cluster.status?.quorumLostSince;
  const automatic = !automaticRecoveryMayRun(tlsVerdict) ? { type: "None", ...recordedLoss === void 0 ? {} : { lostSince: new Date(recordedLoss) } } : await reconcileAutomaticRecovery(ctx, cluster, obs, /* @__PURE__ */ new Date(), {
    etcdClient: withCredentials,
    ...clientTLS2 === void 0 ? {} : { tls: clientTLS2 },
    ...options.automaticRecoveryFloorSeconds === void 0 ? {} : { floorSeconds: options.automaticRecoveryFloorSeconds }
  });
  const reservedMember = isTLSProblem(tls) ? void 0 : tls.reservedMember;
  let step2 = planClusterStep({
    ...tlsVerdict === void 0 ? {} : { tls: tlsVerdict },
    ...auth.problem === void 0 ? {} : { auth: auth.problem },
    membership: () => planNext(cluster.spec, obs.observed, /* @__PURE__ */ new Date(), {
      // A member whose cert-manager certificates were requested before it was made keeps its name.
      freshName: reservedMember?.() ?? memberName(cluster, randomSuffix()),
      ...options.deadAfterMs === void 0 ? {} : { deadAfterMs: options.deadAfterMs }
    }),
    automatic
  });
  if (caRotationMayRun(step2, tlsVerdict) && !isTLSProblem(tls)) {
    const rotation = await rotateCA(ctx.client, cluster, obs, tls, /* @__PURE__ */ new Date(), signal);
    if (rotation?.event !== void 0) {
      ctx.log.info({ step: rotation.event.reason }, rotation.event.message);
      ctx.recorder.event(cluster, "Normal", rotation.event.reason, "CARotation", rotation.event.message);
    }
    if (rotation !== void 0) step2 = rotation.step;
  }
  let reported = step2;
  let requeueAfter = requeueFor(step2);
  if (isAction(step2)) {
    try {
      const result = await act(step2, {
        client: ctx.client,
        cluster,
        obs,
        ...options.etcdClient === void 0 ? {} : { etcdClient: options.etcdClient },
        ...restore === void 0 ? {} : { restore },
        ...clientTLS2 === void 0 ? {} : { tls: clientTLS2 },
        ...credentials === void 0 ? {} : { auth: credentials },
        ...podHooks(tls),
        signal
      });
      if (result.done) {
        ctx.log.info({ step: step2.type, member: memberOfStep(step2) }, step2.message);
        ctx.recorder.event(cluster, "Normal", step2.type, step2.type, step2.message);
        options.metrics.countStep(clusterRef(cluster), step2.type);
      } else {
        reported = { type: "Wait", reason: result.reason, message: result.message };
        requeueAfter = REQUEUE.waiting;
      }
    } catch (err) {
      if (!(err instanceof EtcdError)) throw err;
      const message = `${step2.message}: etcd answered: ${err.message}`;
      ctx.log.warn({ step: step2.type, err: err.message }, "etcd step failed; will retry");
      ctx.recorder.event(cluster, "Warning", `${step2.type}Failed`, step2.type, message);
      reported = { type: "Wait", reason: `${step2.type}Failed`, message };
      requeueAfter = REQUEUE.waiting;
    }
  } else if (step2.type === "Degraded" || step2.type === "QuorumLost") {
    const reason = step2.type === "Degraded" ? step2.reason : "QuorumLost";
    const before = findCondition(cluster.status?.conditions, "Degraded");
    if (before?.status !== "True" || before.reason !== reason) {
      ctx.log.warn({ reason }, step2.message);
      ctx.recorder.event(cluster, "Warning", reason, "Reconcile", step2.message);
    }
  }
  const status = statusOf(cluster, obs, reported, /* @__PURE__ */ new Date());
  if (certificates !== void 0)
    status.conditions = withCertificatesCondition(
      ctx,
      cluster,
      status.conditions,
      certificates.verdict,
      /* @__PURE__ */ new Date()
    );
  if (automatic.lostSince !== void 0) status.quorumLostSince = automatic.lostSince.toISOString();
  if (cluster.spec.recovery?.automatic?.enabled === true && (automatic.type === "Wait" || automatic.type === "Failover")) {
    const degraded3 = status.conditions?.find((c) => c.type === "Degraded");
    if (degraded3?.status === "True" && degraded3.reason === "QuorumLost")
      degraded3.message = `${degraded3.message}; ${automatic.message}`;
  }
  const restored = restoreStatusOf(cluster, cluster.status?.restore, restore, obs.claims, status.clusterID);
  if (restored !== void 0) {
    status.restore = restored;
    if (restored.clusterID !== void 0 && cluster.status?.restore?.clusterID === void 0) {
      const message = `restored from ${restored.source}${restored.revision === void 0 ? "" : ` at revision ${restored.snapshotRevision}, now starting from revision ${restored.revision}`}: cluster ID ${restored.clusterID}`;
      ctx.log.info({ clusterID: restored.clusterID, revision: restored.revision }, message);
      ctx.recorder.event(cluster, "Normal", "Restored", "Restore", message);
    }
  }
  const patch = statusMergePatch(cluster.status, status);
  if (patch !== void 0) {
    await ctx.client.patchStatus(EtcdClusterKind, req.name, req.namespace, patch, "merge", { signal });
  }
  return requeueAfter === void 0 ? void 0 : { requeueAfter };
}
function podHooks(tls) {
  if (isTLSProblem(tls)) return {};
  const { memberPending } = tls;
  return {
    beforePod: (member) => tls.podAnnotations(member),
    ...memberPending === void 0 ? {} : { memberPending: (member) => memberPending(member) }
  };
}
async function refreshCertificates(ctx, cluster, obs, tls) {
  const members = /* @__PURE__ */ new Set([
    ...obs.pods.keys(),
    ...obs.claims.keys(),
    ...(cluster.status?.members ?? []).map((m) => m.name)
  ]);
  for (const [member, pod] of obs.pods) {
    const value = await tls.ensureMember(member);
    await annotatePods(ctx.client, [pod], CERTIFICATES_ANNOTATION, value, { fieldManager: FIELD_MANAGER2 });
  }
  await tls.forgetMembersExcept(members);
  for (const { reason, message } of tls.issued.splice(0)) {
    ctx.log.info({ reason }, message);
    ctx.recorder.event(cluster, "Normal", reason, "Certificates", message);
  }
}
async function applyNetworkPolicy(ctx, cluster, operatorPods) {
  const { namespace } = clusterRef(cluster);
  const name = networkPolicyName(cluster);
  const live = await ctx.cache.get(NetworkPolicy, name, namespace);
  if (cluster.spec.network?.networkPolicy !== true) {
    if (live !== void 0) {
      await ctx.client.delete(NetworkPolicy, name, namespace, { signal: ctx.signal }).catch((err) => {
        if (!isNotFound(err)) throw err;
      });
    }
    return;
  }
  const apply = { fieldManager: FIELD_MANAGER2, force: true, signal: ctx.signal };
  await applyIfChanged(ctx.client, NetworkPolicy, networkPolicy(cluster, operatorPods), live, apply);
}
async function applyServices(ctx, cluster) {
  const { namespace } = clusterRef(cluster);
  const apply = { fieldManager: FIELD_MANAGER2, force: true, signal: ctx.signal };
  for (const svc of [peerService(cluster), clientService(cluster)]) {
    const live = await ctx.cache.get(Service, svc.metadata.name ?? "", namespace);
    await applyIfChanged(ctx.client, Service, svc, live, apply);
  }
}
async function applyDisruptionBudget(ctx, cluster, voters2) {
  const { namespace } = clusterRef(cluster);
  const apply = { fieldManager: FIELD_MANAGER2, force: true, signal: ctx.signal };
  const pdb = podDisruptionBudget(cluster, voters2);
  const live = await ctx.cache.get(PodDisruptionBudget, pdb.metadata.name ?? "", namespace);
  await applyIfChanged(ctx.client, PodDisruptionBudget, pdb, live, apply);
}
function votersOf(cluster, obs) {
  const { etcd } = obs.observed;
  if (etcd.reachable) return etcd.members.filter((m) => !m.isLearner).length;
  return (cluster.status?.members ?? []).filter((m) => !m.learner).length;
}
function isAction(step2) {
  return !["Wait", "InSync", "Degraded", "QuorumLost"].includes(step2.type);
}
function requeueFor(step2) {
  switch (step2.type) {
    case "InSync":
      return REQUEUE.inSync;
    case "Degraded":
      return REQUEUE.degraded;
    case "QuorumLost":
      return REQUEUE.quorumLost;
    case "Wait":
      return step2.reason === "Paused" ? void 0 : REQUEUE.waiting;
    default:
      return REQUEUE.afterStep;
  }
}
function memberOfStep(step2) {
  return "name" in step2 ? step2.name : "toName" in step2 ? step2.toName : void 0;
}
function recordMetrics(metrics2, cluster, obs) {
  const { namespace, name } = clusterRef(cluster);
  const { etcd } = obs.observed;
  const members = etcd.reachable ? etcd.members : [];
  const voters2 = members.filter((m) => !m.isLearner);
  const healthy = voters2.filter((m) => m.healthy).length;
  metrics2.observe(
    namespace,
    name,
    { healthy, unhealthy: voters2.length - healthy, learner: members.length - voters2.length },
    etcd.reachable && voters2.length > 0 && healthy >= quorum2(voters2.length),
    members.some((m) => m.leader)
  );
}

// src/reconcile/metrics.ts
var import_prom_client = __toESM(require_prom_client(), 1);
var MEMBER_STATES = ["healthy", "unhealthy", "learner"];
var EtcdOperatorMetrics = class {
  /** capstan_etcd_cluster_members{object_namespace,object_name,state}: members by state (learners counted apart). */
  members;
  /** capstan_etcd_cluster_quorum{object_namespace,object_name}: 1 while a quorum of voting members is healthy. */
  quorum;
  /** capstan_etcd_cluster_has_leader{object_namespace,object_name}: 1 while the cluster has a leader. */
  hasLeader;
  /** capstan_etcd_membership_changes_total{object_namespace,object_name,step}: membership and pod steps taken. */
  steps;
  /**
   * capstan_etcd_backup_last_success_timestamp_seconds{object_namespace,object_name}: completion time of the
   * newest successful EtcdBackup of the EtcdCluster object_name (set again from every succeeded backup after a
   * restart).
   */
  lastBackupSuccess;
  /** capstan_etcd_backup_failures_total{object_namespace,object_name}: EtcdBackups of the cluster that ended Failed. */
  backupFailures;
  /**
   * capstan_etcd_backup_schedule_stale{object_namespace,object_name}: 1 while the EtcdBackupSchedule object_name is
   * Degraded BackupStale (its newest successful backup is older than twice its interval), else 0.
   */
  scheduleStale;
  /**
   * capstan_etcd_certificate_expiry_timestamp_seconds{object_namespace,object_name,secret,key,source}: notAfter of
   * each certificate the EtcdCluster object_name uses (tls.crt or ca.crt of Secret `secret`; `source` is spec.tls's:
   * secretRef, certManager or operatorManaged), as its last reconcile read them.
   */
  certificateExpiry;
  /**
   * capstan_etcd_certificate_warning_timestamp_seconds{object_namespace,object_name,secret,key,source}: the time from
   * which the operator warns about that certificate (its notAfter less its warning window: half of its renewer's
   * renewBefore, or a third of its lifetime when nobody known renews it, at most 14 days), so the alert follows the
   * CertificatesValid condition and never fires while a renewal is merely due.
   */
  certificateWarning;
  /** The certificate series set per "namespace/cluster", so that the ones no longer used are removed. */
  #certificates = /* @__PURE__ */ new Map();
  /** The value of lastBackupSuccess per "namespace/cluster" (prom-client reads its values asynchronously). */
  #lastSuccess = /* @__PURE__ */ new Map();
  /** The steps counted per "namespace/cluster", so that forget() can remove each one's series. */
  #steps = /* @__PURE__ */ new Map();
  constructor(registry) {
    const registers = [registry];
    this.members = new import_prom_client.Gauge({
      name: "capstan_etcd_cluster_members",
      help: "etcd members of an EtcdCluster by state (healthy and unhealthy voters, learners).",
      labelNames: ["object_namespace", "object_name", "state"],
      registers
    });
    this.quorum = new import_prom_client.Gauge({
      name: "capstan_etcd_cluster_quorum",
      help: "1 while a quorum of the EtcdCluster's voting members is healthy, else 0.",
      labelNames: ["object_namespace", "object_name"],
      registers
    });
    this.hasLeader = new import_prom_client.Gauge({
      name: "capstan_etcd_cluster_has_leader",
      help: "1 while the EtcdCluster has an etcd leader, else 0.",
      labelNames: ["object_namespace", "object_name"],
      registers
    });
    this.steps = new import_prom_client.Counter({
      name: "capstan_etcd_membership_changes_total",
      help: "Steps the operator took on EtcdClusters (AddLearner, PromoteLearner, RemoveMember, UpgradeMember, ...).",
      labelNames: ["object_namespace", "object_name", "step"],
      registers
    });
    this.lastBackupSuccess = new import_prom_client.Gauge({
      name: "capstan_etcd_backup_last_success_timestamp_seconds",
      help: "Unix time the newest successful EtcdBackup of an EtcdCluster completed.",
      labelNames: ["object_namespace", "object_name"],
      registers
    });
    this.backupFailures = new import_prom_client.Counter({
      name: "capstan_etcd_backup_failures_total",
      help: "EtcdBackups of an EtcdCluster that ended Failed.",
      labelNames: ["object_namespace", "object_name"],
      registers
    });
    this.scheduleStale = new import_prom_client.Gauge({
      name: "capstan_etcd_backup_schedule_stale",
      help: "1 while an EtcdBackupSchedule's newest successful backup is older than twice its interval, else 0.",
      labelNames: ["object_namespace", "object_name"],
      registers
    });
    this.certificateExpiry = new import_prom_client.Gauge({
      name: "capstan_etcd_certificate_expiry_timestamp_seconds",
      help: "Unix time a certificate an EtcdCluster uses expires (notAfter), per Secret and key (tls.crt, ca.crt).",
      labelNames: ["object_namespace", "object_name", "secret", "key", "source"],
      registers
    });
    this.certificateWarning = new import_prom_client.Gauge({
      name: "capstan_etcd_certificate_warning_timestamp_seconds",
      help: "Unix time from which the operator warns that a certificate an EtcdCluster uses is not renewed (notAfter less its warning window).",
      labelNames: ["object_namespace", "object_name", "secret", "key", "source"],
      registers
    });
  }
  /**
   * Records the certificates cluster `namespace/name` uses now: each one's notAfter; the series of certificates it
   * no longer uses (a member gone, a Secret replaced) are removed.
   */
  certificatesObserved(namespace, name, certificates) {
    const key = `${namespace}/${name}`;
    const cluster = { object_namespace: namespace, object_name: name };
    const before = this.#certificates.get(key) ?? /* @__PURE__ */ new Map();
    const now = /* @__PURE__ */ new Map();
    for (const c of certificates) {
      const labels = { secret: c.secret, key: c.key, source: c.source };
      now.set(JSON.stringify(labels), labels);
      this.certificateExpiry.set({ ...cluster, ...labels }, Math.floor(c.notAfter.getTime() / 1e3));
      this.certificateWarning.set({ ...cluster, ...labels }, Math.floor(c.warnFrom.getTime() / 1e3));
    }
    for (const [id, labels] of before) {
      if (now.has(id)) continue;
      this.certificateExpiry.remove({ ...cluster, ...labels });
      this.certificateWarning.remove({ ...cluster, ...labels });
    }
    if (now.size === 0) this.#certificates.delete(key);
    else this.#certificates.set(key, now);
  }
  /** Records whether the schedule `namespace/name` is stale (see scheduleStale). */
  scheduleObserved(namespace, name, stale) {
    this.scheduleStale.set({ object_namespace: namespace, object_name: name }, stale ? 1 : 0);
  }
  /** Drops the series of a deleted schedule. */
  forgetSchedule(namespace, name) {
    this.scheduleStale.remove({ object_namespace: namespace, object_name: name });
  }
  /** Records a successful backup of cluster `namespace/cluster` completed at `completed`; an older one changes nothing. */
  backupSucceeded(namespace, cluster, completed) {
    const key = `${namespace}/${cluster}`;
    const seconds = Math.floor(completed.getTime() / 1e3);
    const current = this.#lastSuccess.get(key);
    if (current !== void 0 && current >= seconds) return;
    this.#lastSuccess.set(key, seconds);
    this.lastBackupSuccess.set({ object_namespace: namespace, object_name: cluster }, seconds);
    this.backupFailures.inc({ object_namespace: namespace, object_name: cluster }, 0);
  }
  /** Counts one backup of cluster `namespace/cluster` that ended Failed. */
  backupFailed(namespace, cluster) {
    this.backupFailures.inc({ object_namespace: namespace, object_name: cluster });
  }
  /** Counts one step the operator took on cluster `ref`. */
  countStep(ref, step2) {
    const key = `${ref.namespace}/${ref.name}`;
    const steps = this.#steps.get(key) ?? /* @__PURE__ */ new Set();
    this.#steps.set(key, steps.add(step2));
    this.steps.inc({ object_namespace: ref.namespace, object_name: ref.name, step: step2 });
  }
  /** Records one observation of a cluster. */
  observe(namespace, name, counts, quorum3, hasLeader) {
    for (const state of MEMBER_STATES)
      this.members.set({ object_namespace: namespace, object_name: name, state }, counts[state]);
    this.quorum.set({ object_namespace: namespace, object_name: name }, quorum3 ? 1 : 0);
    this.hasLeader.set({ object_namespace: namespace, object_name: name }, hasLeader ? 1 : 0);
  }
  /**
   * Drops every series of a deleted cluster: its members, quorum and leader, the steps taken on it, its certificates,
   * and its backups' (its EtcdBackups outlive it, but the backup controller records nothing for a cluster that does
   * not exist).
   */
  forget(namespace, name) {
    const labels = { object_namespace: namespace, object_name: name };
    const key = `${namespace}/${name}`;
    for (const state of MEMBER_STATES) this.members.remove({ ...labels, state });
    this.quorum.remove(labels);
    this.hasLeader.remove(labels);
    for (const step2 of this.#steps.get(key) ?? []) this.steps.remove({ ...labels, step: step2 });
    this.#steps.delete(key);
    this.lastBackupSuccess.remove(labels);
    this.#lastSuccess.delete(key);
    this.backupFailures.remove(labels);
    this.certificatesObserved(namespace, name, []);
  }
};

// src/api/backup-schedule.ts
var DEFAULT_KEEP_LAST = 7;
var DEFAULT_FAILED_HISTORY = 3;
var MAX_SCHEDULE_NAME_LENGTH = 52;
var MAX_AGE_PATTERN = "^([0-9]+(d|h|m|s))+$";
var EtcdBackupScheduleKind = defineKind({
  group: GROUP,
  version: VERSION,
  kind: "EtcdBackupSchedule",
  plural: "etcdbackupschedules",
  namespaced: true
});
var retentionSchema = {
  type: "object",
  description: "Which successful backups to keep: a backup beyond keepLast or older than maxAge is deleted, but never the newest successful one, one still running, nor one a restore uses or may still use.",
  default: { keepLast: DEFAULT_KEEP_LAST },
  properties: {
    keepLast: {
      type: "integer",
      format: "int32",
      description: "Keep at most this many successful backups.",
      minimum: 1,
      maximum: 1e3
    },
    maxAge: {
      type: "string",
      description: "Delete successful backups older than this: whole numbers with d, h, m or s, e.g. 7d or 36h.",
      maxLength: 32,
      pattern: MAX_AGE_PATTERN
    }
  },
  "x-kubernetes-validations": [
    {
      rule: "has(self.keepLast) || has(self.maxAge)",
      message: "retention: set keepLast, maxAge or both (omit retention for the default keepLast)"
    }
  ]
};
var scheduleSpecSchema = {
  type: "object",
  description: "When to take backups, how many to keep and what each one is.",
  required: ["schedule", "backupTemplate"],
  properties: {
    schedule: {
      type: "string",
      description: "Cron expression: five fields (minute hour day-of-month month day-of-week) or @hourly, @daily, @weekly, @monthly, @yearly. Checked by the operator (Degraded names the problem).",
      minLength: 1,
      maxLength: 256
    },
    timeZone: {
      type: "string",
      description: "IANA time zone the schedule is read in, e.g. Europe/Berlin (default UTC).",
      maxLength: 64
    },
    startingDeadlineSeconds: {
      type: "integer",
      format: "int64",
      description: "A scheduled time not started within this many seconds (operator down, a backup still running) is skipped and reported missed; default: the latest missed time is always caught up, once.",
      minimum: 10
    },
    suspend: {
      type: "boolean",
      description: "Create no new backups until unset; retention still applies."
    },
    retention: retentionSchema,
    failedBackupsHistoryLimit: {
      type: "integer",
      format: "int32",
      description: "Failed backups kept for inspection; older failed ones are deleted.",
      default: DEFAULT_FAILED_HISTORY,
      minimum: 0,
      maximum: 100
    },
    backupTemplate: {
      type: "object",
      description: "What each scheduled EtcdBackup is made from.",
      required: ["spec"],
      properties: {
        metadata: {
          type: "object",
          description: "Labels and annotations of each backup.",
          properties: {
            labels: { type: "object", additionalProperties: { type: "string" } },
            annotations: { type: "object", additionalProperties: { type: "string" } }
          }
        },
        spec: backupSpecSchema("The spec of each backup.", DEFAULT_SCHEDULED_DELETION_POLICY)
      }
    }
  }
};
var scheduleStatusSchema = {
  type: "object",
  description: "The observed schedule.",
  properties: {
    observedGeneration: {
      type: "integer",
      format: "int64",
      description: "The metadata.generation this status was computed from."
    },
    conditions: conditionsSchema(
      "Available (the schedule is valid and the last backup succeeded), Progressing (a backup runs), Degraded (invalid schedule, missed or failed backups)."
    ),
    lastScheduleTime: {
      type: "string",
      format: "date-time",
      description: "Scheduled time of the last backup created."
    },
    lastMissedTime: {
      type: "string",
      format: "date-time",
      description: "The last scheduled time skipped past its starting deadline."
    },
    lastSuccessfulTime: {
      type: "string",
      format: "date-time",
      description: "When the last successful backup completed."
    },
    lastSuccessfulBackup: { type: "string", description: "Name of the last successful backup." },
    nextScheduleTime: { type: "string", format: "date-time", description: "The next scheduled time." },
    active: { type: "string", description: "Name of the backup running now." }
  }
};
var etcdBackupScheduleSchema = {
  type: "object",
  description: "EtcdBackups taken on a cron schedule, with retention.",
  required: ["spec"],
  "x-kubernetes-validations": [
    {
      rule: `self.metadata.name.size() <= ${MAX_SCHEDULE_NAME_LENGTH} && self.metadata.name.matches('${NAME_RULE}')`,
      message: `metadata.name must be at most ${MAX_SCHEDULE_NAME_LENGTH} characters of lowercase letters, digits and '-' (backups are named <schedule>-<minutes since 1970>)`
    }
  ],
  properties: {
    apiVersion: { type: "string" },
    kind: { type: "string" },
    metadata: { type: "object" },
    spec: scheduleSpecSchema,
    status: scheduleStatusSchema
  }
};

// ../../node_modules/croner/dist/croner.js
function w(i3) {
  return Date.UTC(i3.y, i3.m - 1, i3.d, i3.h, i3.i, i3.s);
}
function C(i3, e) {
  return i3.y === e.y && i3.m === e.m && i3.d === e.d && i3.h === e.h && i3.i === e.i && i3.s === e.s;
}
function O(i3) {
  let e = i3.substring(9);
  return e.includes("Z") || e.includes("+") || e.includes("-");
}
function j(i3, e) {
  let t = new Date(Date.parse(i3));
  if (isNaN(t)) throw new Error("Invalid ISO8601 passed to timezone parser.");
  return O(i3) ? { tp: y(t.getUTCFullYear(), t.getUTCMonth() + 1, t.getUTCDate(), t.getUTCHours(), t.getUTCMinutes(), t.getUTCSeconds(), "Etc/UTC"), ms: t.getUTCMilliseconds() } : { tp: y(t.getFullYear(), t.getMonth() + 1, t.getDate(), t.getHours(), t.getMinutes(), t.getSeconds(), e), ms: t.getMilliseconds() };
}
function D(i3, e, t) {
  let { tp: n, ms: s } = j(i3, e);
  return new Date(P(n, t).getTime() + s);
}
function P(i3, e) {
  let t = v(i3);
  if (t.kind === "single") return t.date;
  if (t.kind === "ambiguous") return t.earlier;
  if (e) throw new Error("Invalid date passed to fromTZ()");
  return t.after;
}
function v(i3) {
  let e = w(i3), t = (a) => M(new Date(a), i3.tz), n = e - t(e), s = g(new Date(n), i3.tz);
  if (C(s, i3)) {
    let a = w(s) - n, o = n - (t(n - x) - a);
    if (o < n && C(g(new Date(o), i3.tz), i3)) return { kind: "ambiguous", earlier: new Date(o), later: new Date(n) };
    let u = n + (a - t(n + x));
    return u > n && C(g(new Date(u), i3.tz), i3) ? { kind: "ambiguous", earlier: new Date(n), later: new Date(u) } : { kind: "single", date: new Date(n) };
  }
  let r = e - (w(s) - n);
  return C(g(new Date(r), i3.tz), i3) ? { kind: "single", date: new Date(r) } : { kind: "gap", before: new Date(Math.min(n, r)), after: new Date(Math.max(n, r)) };
}
var x = 3 * 36e5;
function M(i3, e) {
  return w(g(i3, e)) - (i3.getTime() - i3.getUTCMilliseconds());
}
function _(i3, e, t) {
  let n = M(new Date(i3), t);
  for (; e - i3 > 1e3; ) {
    let s = i3 + Math.floor((e - i3) / 2e3) * 1e3;
    M(new Date(s), t) === n ? i3 = s : e = s;
  }
  return e;
}
function U(i3, e) {
  let t = v(g(new Date(i3), e));
  if (t.kind === "ambiguous") return i3 < t.later.getTime() ? "earlier" : "later";
}
var E = /* @__PURE__ */ new Map();
function g(i3, e) {
  if (e === void 0) return y(i3.getFullYear(), i3.getMonth() + 1, i3.getDate(), i3.getHours(), i3.getMinutes(), i3.getSeconds());
  let t = E.get(e), n;
  try {
    t || (t = new Intl.DateTimeFormat("en-US", { timeZone: e, year: "numeric", month: "numeric", day: "numeric", hour: "numeric", minute: "numeric", second: "numeric", hour12: false }), E.set(e, t)), n = t.formatToParts(i3);
  } catch (r) {
    let a = r instanceof Error ? r.message : String(r);
    throw new RangeError(`toTZ: Invalid timezone '${e}' or date. Please provide a valid IANA timezone (e.g., 'America/New_York', 'Europe/Stockholm'). Original error: ${a}`);
  }
  let s = { year: 0, month: 0, day: 0, hour: 0, minute: 0, second: 0 };
  for (let r of n) (r.type === "year" || r.type === "month" || r.type === "day" || r.type === "hour" || r.type === "minute" || r.type === "second") && (s[r.type] = parseInt(r.value, 10));
  if (isNaN(s.year) || isNaN(s.month) || isNaN(s.day) || isNaN(s.hour) || isNaN(s.minute) || isNaN(s.second)) throw new Error(`toTZ: Failed to parse all date components from timezone '${e}'. This may indicate an invalid date or timezone configuration. Parsed components: ${JSON.stringify(s)}`);
  return s.hour === 24 && (s.hour = 0), { y: s.year, m: s.month, d: s.day, h: s.hour, i: s.minute, s: s.second, tz: e };
}
function y(i3, e, t, n, s, r, a) {
  return { y: i3, m: e, d: t, h: n, i: s, s: r, tz: a };
}
var R = [1, 2, 4, 8, 16];
var b = class i {
  pattern;
  timezone;
  mode;
  alternativeWeekdays;
  sloppyRanges;
  second;
  minute;
  hour;
  day;
  month;
  dayOfWeek;
  year;
  lastDayOfMonth;
  lastWeekday;
  nearestWeekdays;
  starDOM;
  starDOW;
  starYear;
  useAndLogic;
  isFixedTime;
  constructor(e, t, n) {
    this.pattern = e, this.timezone = t, this.mode = n?.mode ?? "auto", this.alternativeWeekdays = n?.alternativeWeekdays ?? false, this.sloppyRanges = n?.sloppyRanges ?? false, this.second = Array(60).fill(0), this.minute = Array(60).fill(0), this.hour = Array(24).fill(0), this.day = Array(31).fill(0), this.month = Array(12).fill(0), this.dayOfWeek = Array(7).fill(0), this.year = Array(1e4).fill(0), this.lastDayOfMonth = false, this.lastWeekday = false, this.nearestWeekdays = Array(31).fill(0), this.starDOM = false, this.starDOW = false, this.starYear = false, this.useAndLogic = false, this.isFixedTime = false, this.parse();
  }
  parse() {
    if (!(typeof this.pattern == "string" || this.pattern instanceof String)) throw new TypeError("CronPattern: Pattern has to be of type string.");
    this.pattern.indexOf("@") >= 0 && (this.pattern = this.handleNicknames(this.pattern).trim());
    let e = this.pattern.match(/\S+/g) || [""], t = e.length;
    if (e.length < 5 || e.length > 7) throw new TypeError("CronPattern: invalid configuration format ('" + this.pattern + "'), exactly five, six, or seven space separated parts are required.");
    if (this.mode !== "auto") {
      let r;
      switch (this.mode) {
        case "5-part":
          r = 5;
          break;
        case "6-part":
          r = 6;
          break;
        case "7-part":
          r = 7;
          break;
        case "5-or-6-parts":
          r = [5, 6];
          break;
        case "6-or-7-parts":
          r = [6, 7];
          break;
        default:
          r = 0;
      }
      if (!(Array.isArray(r) ? r.includes(t) : t === r)) {
        let o = Array.isArray(r) ? r.join(" or ") : r.toString();
        throw new TypeError(`CronPattern: mode '${this.mode}' requires exactly ${o} parts, but pattern '${this.pattern}' has ${t} parts.`);
      }
    }
    if (e.length === 5 && e.unshift("0"), e.length === 6 && e.push("*"), this.pattern.indexOf("?") >= 0) for (let r = 0; r < e.length; r++) e[r] = e[r].replace(/\?/g, "*");
    if (e[3].toUpperCase() === "LW" ? (this.lastWeekday = true, e[3] = "") : e[3].toUpperCase().indexOf("L") >= 0 && (e[3] = e[3].replace(/L/gi, ""), this.lastDayOfMonth = true), e[3] == "*" && (this.starDOM = true), e[6] == "*" && (this.starYear = true), e[4].length >= 3 && (e[4] = this.replaceAlpha(e[4], i.MONTH_NAMES)), e[5].length >= 3 && (e[5] = this.alternativeWeekdays ? this.replaceAlpha(e[5], i.DAY_NAMES_QUARTZ) : this.replaceAlpha(e[5], i.DAY_NAMES)), e[5].startsWith("+") && (this.useAndLogic = true, e[5] = e[5].substring(1), e[5] === "")) throw new TypeError("CronPattern: Day-of-week field cannot be empty after '+' modifier.");
    switch (e[5] == "*" && (this.starDOW = true), this.mode) {
      case "5-part":
        e[0] = "0", e[6] = "*";
        break;
      case "6-part":
        e[6] = "*";
        break;
      case "5-or-6-parts":
        e[6] = "*";
        break;
      case "6-or-7-parts":
        break;
      case "7-part":
      case "auto":
        break;
    }
    this.throwAtIllegalCharacters(e), this.partToArray("second", e[0], 0, 1), this.partToArray("minute", e[1], 0, 1), this.partToArray("hour", e[2], 0, 1), this.partToArray("day", e[3], -1, 1), this.partToArray("month", e[4], -1, 1);
    let n = this.alternativeWeekdays ? -1 : 0;
    this.partToArray("dayOfWeek", e[5], n, 63), this.partToArray("year", e[6], 0, 1), !this.alternativeWeekdays && this.dayOfWeek[7] && (this.dayOfWeek[0] = this.dayOfWeek[7]);
    let s = (r, a) => !r.includes("*") && !r.includes("/") && a.filter((o) => o).length === 1;
    this.isFixedTime = s(e[0], this.second) && s(e[1], this.minute) && s(e[2], this.hour);
  }
  partToArray(e, t, n, s) {
    let r = this[e];
    if (t === "" && !(e === "day" && (this.lastDayOfMonth || this.lastWeekday))) throw new TypeError("CronPattern: configuration entry " + e + " (" + t + ") is empty, check for trailing spaces.");
    if (t === "*") return r.fill(s);
    let a = t.split(",");
    if (a.length > 1) for (let o of a) this.partToArray(e, o, n, s);
    else t.includes("-") && t.includes("/") ? this.handleRangeWithStepping(t, e, n, s) : t.includes("-") ? this.handleRange(t, e, n, s) : t.includes("/") ? this.handleStepping(t, e, n, s) : t !== "" && this.handleNumber(t, e, n, s);
  }
  throwAtIllegalCharacters(e) {
    for (let t = 0; t < e.length; t++) if ((t === 3 ? /[^/*0-9,\-WwLl]+/ : t === 5 ? /[^/*0-9,\-#Ll]+/ : /[^/*0-9,\-]+/).test(e[t])) throw new TypeError("CronPattern: configuration entry " + t + " (" + e[t] + ") contains illegal characters.");
  }
  handleNumber(e, t, n, s) {
    let r = this.extractNth(e, t), a = e.toUpperCase().includes("W");
    if (t !== "day" && a) throw new TypeError("CronPattern: Nearest weekday modifier (W) only allowed in day-of-month.");
    a && (t = "nearestWeekdays");
    let o = parseInt(r[0], 10) + n;
    if (isNaN(o)) throw new TypeError("CronPattern: " + t + " is not a number: '" + e + "'");
    this.setPart(t, o, r[1] || s);
  }
  setPart(e, t, n) {
    if (!Object.prototype.hasOwnProperty.call(this, e)) throw new TypeError("CronPattern: Invalid part specified: " + e);
    if (e === "dayOfWeek") {
      if (t === 7 && (t = 0), t < 0 || t > 6) throw new RangeError("CronPattern: Invalid value for dayOfWeek: " + t);
      this.setNthWeekdayOfMonth(t, n);
      return;
    }
    if (e === "second" || e === "minute") {
      if (t < 0 || t >= 60) throw new RangeError("CronPattern: Invalid value for " + e + ": " + t);
    } else if (e === "hour") {
      if (t < 0 || t >= 24) throw new RangeError("CronPattern: Invalid value for " + e + ": " + t);
    } else if (e === "day" || e === "nearestWeekdays") {
      if (t < 0 || t >= 31) throw new RangeError("CronPattern: Invalid value for " + e + ": " + t);
    } else if (e === "month") {
      if (t < 0 || t >= 12) throw new RangeError("CronPattern: Invalid value for " + e + ": " + t);
    } else if (e === "year" && (t < 1 || t >= 1e4)) throw new RangeError("CronPattern: Invalid value for " + e + ": " + t + " (supported range: 1-9999)");
    this[e][t] = n;
  }
  validateNotNaN(e, t) {
    if (isNaN(e)) throw new TypeError(t);
  }
  validateRange(e, t, n, s, r) {
    if (e > t) throw new TypeError("CronPattern: From value is larger than to value: '" + r + "'");
    if (n !== void 0) {
      if (n === 0) throw new TypeError("CronPattern: Syntax error, illegal stepping: 0");
      if (n > this[s].length) throw new TypeError("CronPattern: Syntax error, steps cannot be greater than maximum value of part (" + this[s].length + ")");
    }
  }
  handleRangeWithStepping(e, t, n, s) {
    if (e.toUpperCase().includes("W")) throw new TypeError("CronPattern: Syntax error, W is not allowed in ranges with stepping.");
    let r = this.extractNth(e, t), a = r[0].match(/^(\d+)-(\d+)\/(\d+)$/);
    if (a === null) throw new TypeError("CronPattern: Syntax error, illegal range with stepping: '" + e + "'");
    let [, o, u, h] = a, c = parseInt(o, 10) + n, d = parseInt(u, 10) + n, m = parseInt(h, 10);
    this.validateNotNaN(c, "CronPattern: Syntax error, illegal lower range (NaN)"), this.validateNotNaN(d, "CronPattern: Syntax error, illegal upper range (NaN)"), this.validateNotNaN(m, "CronPattern: Syntax error, illegal stepping: (NaN)"), this.validateRange(c, d, m, t, e);
    for (let p = c; p <= d; p += m) this.setPart(t, p, r[1] || s);
  }
  extractNth(e, t) {
    let n = e, s;
    if (n.includes("#")) {
      if (t !== "dayOfWeek") throw new Error("CronPattern: nth (#) only allowed in day-of-week field");
      s = n.split("#")[1], n = n.split("#")[0];
    } else if (n.toUpperCase().endsWith("L")) {
      if (t !== "dayOfWeek") throw new Error("CronPattern: L modifier only allowed in day-of-week field (use L alone for day-of-month)");
      s = "L", n = n.slice(0, -1);
    }
    return [n, s];
  }
  handleRange(e, t, n, s) {
    if (e.toUpperCase().includes("W")) throw new TypeError("CronPattern: Syntax error, W is not allowed in a range.");
    let r = this.extractNth(e, t), a = r[0].split("-");
    if (a.length !== 2) throw new TypeError("CronPattern: Syntax error, illegal range: '" + e + "'");
    let o = parseInt(a[0], 10) + n, u = parseInt(a[1], 10) + n;
    this.validateNotNaN(o, "CronPattern: Syntax error, illegal lower range (NaN)"), this.validateNotNaN(u, "CronPattern: Syntax error, illegal upper range (NaN)"), this.validateRange(o, u, void 0, t, e);
    for (let h = o; h <= u; h++) this.setPart(t, h, r[1] || s);
  }
  handleStepping(e, t, n, s) {
    if (e.toUpperCase().includes("W")) throw new TypeError("CronPattern: Syntax error, W is not allowed in parts with stepping.");
    let r = this.extractNth(e, t), a = r[0].split("/");
    if (a.length !== 2) throw new TypeError("CronPattern: Syntax error, illegal stepping: '" + e + "'");
    if (this.sloppyRanges) a[0] === "" && (a[0] = "*");
    else {
      if (a[0] === "") throw new TypeError("CronPattern: Syntax error, stepping with missing prefix ('" + e + "') is not allowed. Use wildcard (*/step) or range (min-max/step) instead.");
      if (a[0] !== "*") throw new TypeError("CronPattern: Syntax error, stepping with numeric prefix ('" + e + "') is not allowed. Use wildcard (*/step) or range (min-max/step) instead.");
    }
    let o = 0;
    a[0] !== "*" && (o = parseInt(a[0], 10) + n);
    let u = parseInt(a[1], 10);
    this.validateNotNaN(u, "CronPattern: Syntax error, illegal stepping: (NaN)"), this.validateRange(0, this[t].length - 1, u, t, e);
    for (let h = o; h < this[t].length; h += u) t === "year" && h === 0 || this.setPart(t, h, r[1] || s);
  }
  replaceAlpha(e, t) {
    let n = e;
    for (let [s, r] of Object.entries(t)) n = n.replace(new RegExp(s, "gi"), r);
    return n;
  }
  static DAY_NAMES = { "-sun": "-7", sun: "0", mon: "1", tue: "2", wed: "3", thu: "4", fri: "5", sat: "6" };
  static DAY_NAMES_QUARTZ = { sun: "1", mon: "2", tue: "3", wed: "4", thu: "5", fri: "6", sat: "7" };
  static MONTH_NAMES = { jan: "1", feb: "2", mar: "3", apr: "4", may: "5", jun: "6", jul: "7", aug: "8", sep: "9", oct: "10", nov: "11", dec: "12" };
  static NICKNAME_MAP = { "@yearly": "0 0 1 1 *", "@annually": "0 0 1 1 *", "@monthly": "0 0 1 * *", "@weekly": "0 0 * * 0", "@daily": "0 0 * * *", "@midnight": "0 0 * * *", "@hourly": "0 * * * *" };
  handleNicknames(e) {
    let t = e.trim().toLowerCase();
    if (t === "@reboot") throw new TypeError("CronPattern: @reboot is not supported in this environment. This is an event-based trigger that requires system startup detection.");
    return i.NICKNAME_MAP[t] || e;
  }
  setNthWeekdayOfMonth(e, t) {
    if (typeof t != "number" && t.toUpperCase() === "L") this.dayOfWeek[e] = this.dayOfWeek[e] | 32;
    else if (t === 63) this.dayOfWeek[e] = 63;
    else if (t < 6 && t > 0) this.dayOfWeek[e] = this.dayOfWeek[e] | R[t - 1];
    else throw new TypeError(`CronPattern: nth weekday out of range, should be 1-5 or L. Value: ${t}, Type: ${typeof t}`);
  }
};
var $ = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
var l = [["month", "year", 0], ["day", "month", -1], ["hour", "day", 0], ["minute", "hour", 0], ["second", "minute", 0]];
var f = class i2 {
  tz;
  instantMs;
  instantFields;
  ms;
  second;
  minute;
  hour;
  day;
  month;
  year;
  constructor(e, t) {
    if (this.tz = t, e && e instanceof Date) if (!isNaN(e)) this.fromDate(e);
    else throw new TypeError("CronDate: Invalid date passed to CronDate constructor");
    else if (e == null) this.fromDate(/* @__PURE__ */ new Date());
    else if (e && typeof e == "string") this.fromString(e);
    else if (e instanceof i2) this.fromCronDate(e);
    else throw new TypeError("CronDate: Invalid type (" + typeof e + ") passed to CronDate constructor");
  }
  getLastDayOfMonth(e, t) {
    return t !== 1 ? $[t] : new Date(Date.UTC(e, t + 1, 0)).getUTCDate();
  }
  getLastWeekday(e, t) {
    let n = this.getLastDayOfMonth(e, t), r = new Date(Date.UTC(e, t, n)).getUTCDay();
    return r === 0 ? n - 2 : r === 6 ? n - 1 : n;
  }
  getNearestWeekday(e, t, n) {
    let s = this.getLastDayOfMonth(e, t);
    if (n > s) return -1;
    let a = new Date(Date.UTC(e, t, n)).getUTCDay();
    return a === 0 ? n === s ? n - 2 : n + 1 : a === 6 ? n === 1 ? n + 2 : n - 1 : n;
  }
  isNthWeekdayOfMonth(e, t, n, s) {
    let a = new Date(Date.UTC(e, t, n)).getUTCDay(), o = 0;
    for (let u = 1; u <= n; u++) new Date(Date.UTC(e, t, u)).getUTCDay() === a && o++;
    if (s & 63 && R[o - 1] & s) return true;
    if (s & 32) {
      let u = this.getLastDayOfMonth(e, t);
      for (let h = n + 1; h <= u; h++) if (new Date(Date.UTC(e, t, h)).getUTCDay() === a) return false;
      return true;
    }
    return false;
  }
  fromDate(e) {
    if (this.tz !== void 0) if (typeof this.tz == "number") this.ms = e.getUTCMilliseconds(), this.second = e.getUTCSeconds(), this.minute = e.getUTCMinutes() + this.tz, this.hour = e.getUTCHours(), this.day = e.getUTCDate(), this.month = e.getUTCMonth(), this.year = e.getUTCFullYear(), this.apply();
    else try {
      let t = g(e, this.tz);
      this.ms = e.getMilliseconds(), this.second = t.s, this.minute = t.i, this.hour = t.h, this.day = t.d, this.month = t.m - 1, this.year = t.y, this.cacheInstant(e.getTime() - this.ms);
    } catch (t) {
      let n = t instanceof Error ? t.message : String(t);
      throw new TypeError(`CronDate: Failed to convert date to timezone '${this.tz}'. This may happen with invalid timezone names or dates. Original error: ${n}`);
    }
    else this.ms = e.getMilliseconds(), this.second = e.getSeconds(), this.minute = e.getMinutes(), this.hour = e.getHours(), this.day = e.getDate(), this.month = e.getMonth(), this.year = e.getFullYear(), this.cacheInstant(e.getTime() - this.ms);
  }
  cacheInstant(e) {
    this.instantMs = e;
    let { year: t, month: n, day: s, hour: r, minute: a, second: o } = this;
    this.instantFields = [t, n, s, r, a, o, this.tz];
  }
  cachedInstant() {
    let e = this.instantFields;
    if (!(e === void 0 || e[6] !== this.tz) && !(e[5] !== this.second || e[4] !== this.minute || e[3] !== this.hour) && !(e[2] !== this.day || e[1] !== this.month || e[0] !== this.year)) return this.instantMs;
  }
  fromCronDate(e) {
    this.tz = e.tz, this.year = e.year, this.month = e.month, this.day = e.day, this.hour = e.hour, this.minute = e.minute, this.second = e.second, this.ms = e.ms, this.instantMs = e.instantMs, this.instantFields = e.instantFields;
  }
  apply() {
    if (this.month > 11 || this.month < 0 || this.day > this.getLastDayOfMonth(this.year, this.month) || this.day < 1 || this.hour > 23 || this.minute > 59 || this.second > 59 || this.hour < 0 || this.minute < 0 || this.second < 0) {
      let e = /* @__PURE__ */ new Date(0);
      return e.setUTCFullYear(this.year, this.month, this.day), e.setUTCHours(this.hour, this.minute, this.second, this.ms), this.ms = e.getUTCMilliseconds(), this.second = e.getUTCSeconds(), this.minute = e.getUTCMinutes(), this.hour = e.getUTCHours(), this.day = e.getUTCDate(), this.month = e.getUTCMonth(), this.year = e.getUTCFullYear(), true;
    } else return false;
  }
  fromString(e) {
    if (typeof this.tz == "number") {
      if (O(e)) return this.fromDate(D(e));
      let t = D(e, "Etc/UTC");
      this.ms = t.getUTCMilliseconds(), this.second = t.getUTCSeconds(), this.minute = t.getUTCMinutes(), this.hour = t.getUTCHours(), this.day = t.getUTCDate(), this.month = t.getUTCMonth(), this.year = t.getUTCFullYear(), this.apply();
    } else return this.fromDate(D(e, this.tz));
  }
  findNext(e, t, n, s) {
    return this._findMatch(e, t, n, s, 1);
  }
  _matchDayValue(e, t, n, s) {
    let r = e;
    if (!r) {
      for (let a = 0; a < n.nearestWeekdays.length; a++) if (n.nearestWeekdays[a]) {
        let o = this.getNearestWeekday(this.year, this.month, a + 1);
        if (o !== -1 && o === t) {
          r = 1;
          break;
        }
      }
    }
    if (n.lastWeekday) {
      let a = this.getLastWeekday(this.year, this.month);
      t === a && (r = 1);
    }
    if (n.lastDayOfMonth) {
      let a = this.getLastDayOfMonth(this.year, this.month);
      t === a && (r = 1);
    }
    if (!n.starDOW) {
      let a = new Date(Date.UTC(this.year, this.month, 1, 0, 0, 0, 0)).getUTCDay(), o = n.dayOfWeek[(a + (t - 1)) % 7];
      o && o & 63 && (o = this.isNthWeekdayOfMonth(this.year, this.month, t, o) ? 1 : 0), n.useAndLogic ? r = r && o : !s.domAndDow && !n.starDOM ? r = r || o : r = r && o;
    }
    return r;
  }
  _findMatch(e, t, n, s, r) {
    let a = this[t], o = this[t] + s, u = r === 1 ? (h) => h < n[t].length : (h) => h >= 0;
    for (let h = o; u(h); h += r) {
      let c = n[t][h];
      if (t === "day" && (c = this._matchDayValue(c, h - s, n, e)), c) return this[t] = h - s, a !== this[t] ? 2 : 1;
    }
    return 3;
  }
  recurse(e, t, n) {
    let s = this.year, r = n;
    for (; typeof r == "number"; ) {
      if (e.starYear && Math.abs(this.year - s) > 400) return null;
      r = this.recurseStep(e, t, r);
    }
    return r;
  }
  recurseStep(e, t, n) {
    if (n === 0 && !e.starYear) {
      if (this.year >= 0 && this.year < e.year.length && e.year[this.year] === 0) {
        let r = -1;
        for (let a = this.year + 1; a < e.year.length && a < 1e4; a++) if (e.year[a] === 1) {
          r = a;
          break;
        }
        if (r === -1) return null;
        this.year = r, this.month = 0, this.day = 1, this.hour = 0, this.minute = 0, this.second = 0, this.ms = 0;
      }
      if (this.year >= 1e4) return null;
    }
    let s = this.findNext(t, l[n][0], e, l[n][2]);
    if (s > 1) {
      let r = n + 1;
      for (; r < l.length; ) this[l[r][0]] = -l[r][2], r++;
      if (s === 3) {
        if (this[l[n][1]]++, this[l[n][0]] = -l[n][2], this.apply(), n === 0 && !e.starYear) {
          for (; this.year >= 0 && this.year < e.year.length && e.year[this.year] === 0 && this.year < 1e4; ) this.year++;
          if (this.year >= 1e4 || this.year >= e.year.length) return null;
        }
        return 0;
      } else if (this.apply()) return n - 1;
    }
    return n += 1, n >= l.length ? this : (e.starYear ? this.year >= 3e3 : this.year >= 1e4) ? null : n;
  }
  increment(e, t, n) {
    return this.instantMs = void 0, this.instantFields = void 0, this.second += t.interval !== void 0 && t.interval > 1 && n ? t.interval : 1, this.ms = 0, this.apply(), this.recurse(e, t, 0);
  }
  decrement(e, t) {
    return this.instantMs = void 0, this.instantFields = void 0, this.second -= t.interval !== void 0 && t.interval > 1 ? t.interval : 1, this.ms = 0, this.apply(), this.recurseBackward(e, t, 0);
  }
  recurseBackward(e, t, n) {
    let s = this.year, r = n;
    for (; typeof r == "number"; ) {
      if (e.starYear && Math.abs(this.year - s) > 400) return null;
      r = this.recurseBackwardStep(e, t, r);
    }
    return r;
  }
  recurseBackwardStep(e, t, n) {
    if (n === 0 && !e.starYear) {
      if (this.year >= 0 && this.year < e.year.length && e.year[this.year] === 0) {
        let r = -1;
        for (let a = this.year - 1; a >= 0; a--) if (e.year[a] === 1) {
          r = a;
          break;
        }
        if (r === -1) return null;
        this.year = r, this.month = 11, this.day = 31, this.hour = 23, this.minute = 59, this.second = 59, this.ms = 0;
      }
      if (this.year < 0) return null;
    }
    let s = this.findPrevious(t, l[n][0], e, l[n][2]);
    if (s > 1) {
      let r = n + 1;
      for (; r < l.length; ) {
        let a = l[r][0], o = l[r][2], u = this.getMaxPatternValue(a, e, o);
        this[a] = u, r++;
      }
      if (s === 3) {
        if (this[l[n][1]]--, n === 0) {
          let u = this.getLastDayOfMonth(this.year, this.month);
          this.day > u && (this.day = u);
        }
        if (n === 1) if (this.day <= 0) this.day = 1;
        else {
          let u = this.year, h = this.month;
          for (; h < 0; ) h += 12, u--;
          for (; h > 11; ) h -= 12, u++;
          let c = this.getLastDayOfMonth(u, h);
          this.day > c && (this.day = c);
        }
        this.apply();
        let a = l[n][0], o = l[n][2];
        if (this[a] = this.getMaxPatternValue(a, e, o), this.apply(), n === 0) {
          let u = l[1][2], h = this.getMaxPatternValue("day", e, u);
          h !== this.day && (this.day = h, this.hour = this.getMaxPatternValue("hour", e, l[2][2]), this.minute = this.getMaxPatternValue("minute", e, l[3][2]), this.second = this.getMaxPatternValue("second", e, l[4][2]));
        }
        if (n === 0 && !e.starYear) {
          for (; this.year >= 0 && this.year < e.year.length && e.year[this.year] === 0; ) this.year--;
          if (this.year < 0) return null;
        }
        return 0;
      } else if (this.apply()) return n - 1;
    }
    return n += 1, n >= l.length ? this : this.year < 0 ? null : n;
  }
  getMaxPatternValue(e, t, n) {
    let s = t[e].length - 1 - n;
    for (let r = t[e].length - 1; r >= 0; r--) if (t[e][r]) {
      s = r - n;
      break;
    }
    if (e === "day") {
      let r = this.getLastDayOfMonth(this.year, this.month);
      return t.lastDayOfMonth || !t.starDOW ? r : Math.min(s, r);
    }
    return s;
  }
  findPrevious(e, t, n, s) {
    return this._findMatch(e, t, n, s, -1);
  }
  getDate(e) {
    if (!e && typeof this.tz != "number") {
      let t = this.cachedInstant();
      if (t !== void 0) return new Date(t + (this.tz === void 0 ? this.ms : 0));
    }
    return e || this.tz === void 0 ? new Date(this.year, this.month, this.day, this.hour, this.minute, this.second, this.ms) : typeof this.tz == "number" ? new Date(Date.UTC(this.year, this.month, this.day, this.hour, this.minute - this.tz, this.second, this.ms)) : P(y(this.year, this.month + 1, this.day, this.hour, this.minute, this.second, this.tz), false);
  }
  getTime() {
    return this.getDate(false).getTime();
  }
  match(e, t) {
    if (!e.starYear && (this.year < 0 || this.year >= e.year.length || e.year[this.year] === 0)) return false;
    for (let n = 0; n < l.length; n++) {
      let s = l[n][0], r = l[n][2], a = this[s];
      if (a + r < 0 || a + r >= e[s].length) return false;
      let o = e[s][a + r];
      if (s === "day" && (o = this._matchDayValue(o, a, e, t)), !o) return false;
    }
    return true;
  }
};
function I(i3) {
  i3 === void 0 && (i3 = {}), delete i3.name, i3.legacyMode !== void 0 && i3.domAndDow === void 0 ? i3.domAndDow = !i3.legacyMode : i3.domAndDow === void 0 && (i3.domAndDow = false), i3.legacyMode = !i3.domAndDow;
  let e = (n, s) => n === void 0 ? s : n;
  if (i3.paused = e(i3.paused, false), i3.maxRuns = e(i3.maxRuns, 1 / 0), i3.catch = e(i3.catch, false), i3.unref = e(i3.unref, false), i3.mode = e(i3.mode, "auto"), i3.alternativeWeekdays = e(i3.alternativeWeekdays, false), i3.sloppyRanges = e(i3.sloppyRanges, false), i3.allowPast = e(i3.allowPast, false), i3.interval = i3.interval === void 0 ? 0 : parseInt(i3.interval.toString(), 10), i3.utcOffset = i3.utcOffset === void 0 ? void 0 : parseInt(i3.utcOffset.toString(), 10), i3.dayOffset = i3.dayOffset === void 0 ? 0 : parseInt(i3.dayOffset.toString(), 10), !["auto", "5-part", "6-part", "7-part", "5-or-6-parts", "6-or-7-parts"].includes(i3.mode)) throw new Error("CronOptions: mode must be one of 'auto', '5-part', '6-part', '7-part', '5-or-6-parts', or '6-or-7-parts'.");
  i3.timezone === "" && (i3.timezone = void 0);
  let t = i3.timezone ?? i3.utcOffset;
  if (i3.startAt && (i3.startAt = W(new f(i3.startAt, t))), i3.stopAt && (i3.stopAt = W(new f(i3.stopAt, t))), i3.interval !== null) {
    if (isNaN(i3.interval)) throw new Error("CronOptions: Supplied value for interval is not a number");
    if (i3.interval < 0) throw new Error("CronOptions: Supplied value for interval can not be negative");
  }
  if (i3.utcOffset !== void 0) {
    if (isNaN(i3.utcOffset)) throw new Error("CronOptions: Invalid value passed for utcOffset, should be number representing minutes offset from UTC.");
    if (i3.utcOffset < -870 || i3.utcOffset > 870) throw new Error("CronOptions: utcOffset out of bounds.");
    if (i3.utcOffset !== void 0 && i3.timezone) throw new Error("CronOptions: Combining 'utcOffset' with 'timezone' is not allowed.");
  }
  if (i3.unref !== true && i3.unref !== false) throw new Error("CronOptions: Unref should be either true, false or undefined(false).");
  if (i3.dayOffset !== void 0 && i3.dayOffset !== 0 && isNaN(i3.dayOffset)) throw new Error("CronOptions: Invalid value passed for dayOffset, should be a number representing days to offset.");
  return i3;
}
function W(i3) {
  return i3.ms ? (i3.ms = 0, new f(new Date(i3.getTime() + 1e3), i3.tz)) : i3;
}
function T(i3) {
  return typeof i3 == "function";
}
function z(i3) {
  return T(i3);
}
function F(i3) {
  typeof Deno < "u" && typeof Deno.unrefTimer < "u" ? Deno.unrefTimer(i3) : i3 && typeof i3.unref < "u" && i3.unref();
}
var N = 1440 * 60 * 1e3;
var L = 30 * 1e3;
var k = [];
var Y = class {
  name;
  options;
  _states;
  fn;
  _startAtRoundingMs = 0;
  getTz() {
    return this.options.timezone ?? this.options.utcOffset;
  }
  applyDayOffset(e) {
    let t = this._offsetMs();
    return t ? new Date(e.getTime() + t) : e;
  }
  _offsetMs() {
    return (this.options.dayOffset ?? 0) * N;
  }
  get _startAt() {
    return this.options.startAt;
  }
  get _stopAt() {
    return this.options.stopAt;
  }
  _nextTarget(e, t) {
    let n = this._offsetMs(), s = this._next(this._shift(e), new Date(t.getTime() - n), { startAt: this._shift(this._startAt), stopAt: this._shift(this._stopAt) });
    return s ? this.applyDayOffset(s.getDate(false)) : null;
  }
  _previousTarget(e, t) {
    let n = this._previous(this._shift(e ?? t), { startAt: this._shift(this._startAt), stopAt: this._shift(this._stopAt) });
    return n ? this.applyDayOffset(n.getDate(false)) : null;
  }
  _shift(e) {
    if (e != null) return new f(new Date(this._toMs(e) - this._offsetMs()), this.getTz());
  }
  constructor(e, t, n) {
    let s, r;
    if (T(t)) r = t;
    else if (typeof t == "object") s = t;
    else if (t !== void 0) throw new Error("Cron: Invalid argument passed for optionsIn. Should be one of function, or object (options).");
    if (T(n)) r = n;
    else if (typeof n == "object") s = n;
    else if (n !== void 0) throw new Error("Cron: Invalid argument passed for funcIn. Should be one of function, or object (options).");
    this.name = s?.name;
    let a = s?.startAt;
    if (this.options = I(s), a && this._startAt && (this._startAtRoundingMs = this._startAt.getTime() - new f(a, this.getTz()).getTime()), this._states = { kill: false, blocking: false, previousRun: void 0, currentRun: void 0, once: void 0, currentTimeout: void 0, maxRuns: s ? s.maxRuns : void 0, paused: s ? s.paused : false, pattern: new b("* * * * *", void 0, { mode: "auto" }) }, e && (e instanceof Date || typeof e == "string" && e.indexOf(":") > 0) ? this._states.once = new f(e, this.getTz()) : this._states.pattern = new b(e, this.options.timezone, { mode: this.options.mode, alternativeWeekdays: this.options.alternativeWeekdays, sloppyRanges: this.options.sloppyRanges }), this.name) {
      if (k.find((u) => u.name === this.name)) throw new Error("Cron: Tried to initialize new named job '" + this.name + "', but name already taken.");
      k.push(this);
    }
    return r !== void 0 && z(r) && (this.fn = r, this.schedule()), this;
  }
  nextRun(e) {
    return this._nextTarget(e, /* @__PURE__ */ new Date());
  }
  nextRuns(e, t) {
    this._states.maxRuns !== void 0 && e > this._states.maxRuns && (e = this._states.maxRuns);
    let n = t || this._states.currentRun || void 0;
    return this._enumerateRuns(e, n, "next");
  }
  previousRuns(e, t) {
    return this._enumerateRuns(e, t || void 0, "previous");
  }
  enumerate(e) {
    return new A(this, e);
  }
  _enumerateRuns(e, t, n) {
    let s = [], r = /* @__PURE__ */ new Date(), a = t;
    for (; e-- > 0; ) {
      let o = n === "next" ? this._nextTarget(a, r) : this._previousTarget(a, r);
      if (!o) break;
      s.push(o), a = o;
    }
    return s;
  }
  match(e) {
    if (this._states.once) {
      let n = new f(e, this.getTz());
      n.ms = 0;
      let s = new f(this._states.once, this.getTz());
      return s.ms = 0, n.getTime() === s.getTime();
    }
    let t = new f(e, this.getTz());
    return t.ms = 0, t.match(this._states.pattern, this.options);
  }
  getPattern() {
    if (!this._states.once) return this._states.pattern ? this._states.pattern.pattern : void 0;
  }
  getOnce() {
    return this._states.once ? this._states.once.getDate() : null;
  }
  isRunning() {
    return !this._states.paused && !this._states.kill && this.fn !== void 0 && this._nextTarget(this._states.currentRun, /* @__PURE__ */ new Date()) !== null;
  }
  isStopped() {
    return this._states.kill;
  }
  isBusy() {
    return this._states.blocking;
  }
  currentRun() {
    return this._states.currentRun ? this._states.currentRun.getDate() : null;
  }
  previousRun() {
    return this._states.previousRun ? this._states.previousRun.getDate() : null;
  }
  msToNext(e) {
    let t = /* @__PURE__ */ new Date(), n = this._nextTarget(e, t);
    return n ? n.getTime() - this._toMs(e ?? t) : null;
  }
  stop() {
    this._states.kill = true, this._states.currentTimeout && clearTimeout(this._states.currentTimeout);
    let e = k.indexOf(this);
    e >= 0 && k.splice(e, 1);
  }
  pause() {
    return this._states.paused = true, !this._states.kill;
  }
  resume() {
    return this._states.paused = false, !this._states.kill;
  }
  schedule(e) {
    return this._schedule(e);
  }
  _schedule(e, t) {
    if (e && this.fn) throw new Error("Cron: It is not allowed to schedule two functions using the same Croner instance.");
    e && (this.fn = e);
    let n = t ?? /* @__PURE__ */ new Date(), s = this._nextTarget(void 0, n), r = s ? s.getTime() - n.getTime() : null, a = this._states.currentRun;
    a && a.getTime() > n.getTime() && (a = void 0);
    let o = this._nextTarget(a, n);
    return r === null || isNaN(r) || o === null ? this : (r > L && (r = L), r < 0 && (r = this._states.paused ? 1e3 : 0), this._states.currentTimeout = setTimeout(() => this._checkTrigger(o), r), this._states.currentTimeout && this.options.unref && F(this._states.currentTimeout), this);
  }
  async _trigger(e = /* @__PURE__ */ new Date()) {
    this._states.blocking = true, this._states.currentRun = new f(e, this.getTz());
    try {
      if (this.options.catch) try {
        this.fn !== void 0 && await this.fn(this, this.options.context);
      } catch (t) {
        if (T(this.options.catch)) try {
          this.options.catch(t, this);
        } catch {
        }
      }
      else this.fn !== void 0 && await this.fn(this, this.options.context);
    } finally {
      this._states.previousRun = new f(e, this.getTz()), this._states.blocking = false;
    }
  }
  async trigger() {
    await this._trigger();
  }
  runsLeft() {
    return this._states.maxRuns;
  }
  _checkTrigger(e) {
    let t = /* @__PURE__ */ new Date(), n = !this._states.paused && t.getTime() >= e.getTime(), s = this._states.blocking && this.options.protect;
    n && !s ? (this._states.maxRuns !== void 0 && this._states.maxRuns--, this._trigger(t)) : n && s && T(this.options.protect) && setTimeout(() => this.options.protect(this), 0), this._schedule(void 0, n ? void 0 : t);
  }
  _next(e, t, n) {
    let s = n ? n.startAt : this._startAt, r = n ? n.stopAt : this._stopAt, a = !!e, o = !!(e || this._states.currentRun), u = false;
    !e && s && this.options.interval && (e = this._calculatePreviousRun(s, t), e && (o = true), u = !e);
    let h = e ?? t ?? /* @__PURE__ */ new Date(), c = this._toMs(h);
    e = new f(h, this.getTz()), s && c < s.getTime() && (e = u ? s : new f(new Date(s.getTime() - 1e3), this.getTz()), c = e.getTime());
    let d = this._states.once || new f(e, this.getTz());
    if (!u && d !== this._states.once && (d = this._findOccurrence(e, c, 1, o)), this._states.once) {
      let m = this._states.once.getTime(), p = c - m;
      if (s && m < s.getTime() - this._startAtRoundingMs || this._states.currentRun && this.applyDayOffset(this._states.once.getDate()).getTime() <= this._states.currentRun.getTime() || (a ? p >= 0 : p > 1e3 && !this.options.allowPast)) return null;
    }
    return d === null || this._states.maxRuns !== void 0 && this._states.maxRuns <= 0 || this._states.kill || r && d.getTime() >= r.getTime() ? null : d;
  }
  _previous(e, t) {
    let n = this._toMs(e ?? /* @__PURE__ */ new Date());
    if (t.stopAt && n > t.stopAt.getTime() && (n = t.stopAt.getTime()), this._states.once) return this._states.once.getTime() < n ? this._states.once : null;
    let s = this._findOccurrence(new f(new Date(n), this.getTz()), n, -1);
    return s === null || t.startAt && s.getTime() < t.startAt.getTime() ? null : s;
  }
  _toMs(e) {
    return e instanceof Date ? e.getTime() : new f(e, this.getTz()).getTime();
  }
  _findOccurrence(e, t, n, s = false) {
    let r = this._walk(e, t, n, s), a = this.getTz();
    if (this._states.pattern.isFixedTime && n === 1 || typeof a == "number" || U(t, a) !== (n === 1 ? "earlier" : "later")) return r;
    let o = Math.floor(t / 1e3) * 1e3, u = n === 1 ? _(o, o + N, a) : _(o - N, o, a) - 1e3;
    if (r && (u - r.getTime()) * n > 0) return r;
    let h = this._walk(new f(new Date(u), a), u - n, n, false, true);
    return !r || !h ? r ?? h : (r.getTime() - h.getTime()) * n > 0 ? h : r;
  }
  _walk(e, t, n, s, r = false) {
    let a = this._states.pattern, o = (h, c) => n === 1 ? h.increment(a, this.options, c) : h.decrement(a, this.options), u = new f(e, this.getTz());
    for ((!r || !u.match(a, this.options)) && (u = o(u, s)); u; ) {
      let h = this._runAt(u, t, n);
      if (h) return new f(h, this.getTz());
      u = o(u, false);
    }
    return null;
  }
  _runAt(e, t, n) {
    let s = (m) => (m.getTime() - t) * n > 0, r = e.tz;
    if (typeof r == "number") {
      let m = e.getDate();
      return s(m) ? m : null;
    }
    let a = y(e.year, e.month + 1, e.day, e.hour, e.minute, e.second, r), o = v(a), u = this._states.pattern.isFixedTime;
    if (o.kind === "single") return s(o.date) ? o.date : null;
    if (o.kind === "ambiguous") {
      let { earlier: m, later: p } = o;
      return (u ? [m] : n === 1 ? [m, p] : [p, m]).find(s) ?? null;
    }
    if (!u) return null;
    let h = new Date(_(o.before.getTime(), o.after.getTime(), r)), c = g(h, r);
    return c.y === a.y && c.m === a.m && c.d === a.d && s(h) ? h : null;
  }
  _calculatePreviousRun(e, t) {
    let n = new f(t, this.getTz()).getTime();
    if (e.getTime() > n) return;
    let s = this.options.interval * 1e3, r = e;
    for (; r.getTime() + s <= n; ) {
      let a = new f(r, this.getTz()).increment(this._states.pattern, this.options, true);
      if (a === null) break;
      r = a;
    }
    return r;
  }
};
var A = class {
  cron;
  cursor;
  now;
  done;
  initialMaxRuns;
  remainingRuns;
  constructor(e, t) {
    this.cron = e, this.initialMaxRuns = e.runsLeft() ?? 1 / 0, this.reset(t);
  }
  next() {
    if (this.done || this.remainingRuns <= 0) return this.done = true, { value: void 0, done: true };
    let e = this.cron._nextTarget(this.cursor, this.now);
    return e === null ? (this.done = true, { value: void 0, done: true }) : (this.cursor = e, this.remainingRuns--, { value: e, done: false });
  }
  peek() {
    return this.done || this.remainingRuns <= 0 ? null : this.cron._nextTarget(this.cursor, this.now);
  }
  reset(e) {
    this.cursor = e instanceof Date ? new Date(e.getTime()) : e ?? void 0, this.now = /* @__PURE__ */ new Date(), this.done = false, this.remainingRuns = this.initialMaxRuns;
  }
  [Symbol.iterator]() {
    return this;
  }
};

// src/plan/backup-schedule.ts
var SCHEDULED_TIME_ANNOTATION = "etcd.capstan.dev/scheduled-time";
var MAX_COUNTED_MISSED = 100;
function scheduledBackupName(schedule, time) {
  return `${schedule}-${Math.floor(time.getTime() / 6e4)}`;
}
var UNIT_MS = { d: 864e5, h: 36e5, m: 6e4, s: 1e3 };
function parseMaxAge(text) {
  if (!/^([0-9]+[dhms])+$/.test(text)) return void 0;
  let ms = 0;
  for (const [, n, unit] of text.matchAll(/([0-9]+)([dhms])/g)) ms += Number(n) * UNIT_MS[unit];
  return ms;
}
function parseSchedule(spec) {
  const timezone = spec.timeZone ?? "UTC";
  try {
    new Intl.DateTimeFormat("en", { timeZone: timezone });
  } catch {
    return {
      field: "spec.timeZone",
      message: `spec.timeZone "${timezone}" is not an IANA time zone: write one such as UTC or Europe/Berlin`
    };
  }
  let cron;
  try {
    cron = new Y(spec.schedule, { timezone, mode: "5-part" });
  } catch (err) {
    return {
      field: "spec.schedule",
      message: `spec.schedule "${spec.schedule}" is not a cron expression (${err.message}): write five fields, minute hour day-of-month month day-of-week, e.g. "0 3 * * *", or @hourly, @daily, @weekly`
    };
  }
  if (cron.nextRun(/* @__PURE__ */ new Date(0)) === null) {
    return {
      field: "spec.schedule",
      message: `spec.schedule "${spec.schedule}" matches no date (e.g. February 31st): it would never take a backup`
    };
  }
  return cron;
}
var running = (b2) => b2.phase === void 0 || b2.phase === "Pending" || b2.phase === "Running";
var newestFirst = (a, b2) => (b2.completionTime ?? b2.scheduledTime).getTime() - (a.completionTime ?? a.scheduledTime).getTime() || b2.scheduledTime.getTime() - a.scheduledTime.getTime() || (a.name < b2.name ? 1 : -1);
function retentionDeletes(spec, backups, now, inUse = /* @__PURE__ */ new Map()) {
  const retention = spec.retention ?? { keepLast: DEFAULT_KEEP_LAST };
  const maxAgeMs = retention.maxAge === void 0 ? void 0 : parseMaxAge(retention.maxAge);
  const out = [];
  const succeeded = backups.filter((b2) => b2.phase === "Succeeded" && !inUse.has(b2.name)).sort(newestFirst);
  succeeded.forEach((b2, i3) => {
    if (i3 === 0) return;
    if (retention.keepLast !== void 0 && i3 >= retention.keepLast) {
      out.push({ name: b2.name, reason: `beyond retention.keepLast ${retention.keepLast}` });
    } else if (maxAgeMs !== void 0 && now.getTime() - (b2.completionTime ?? b2.scheduledTime).getTime() > maxAgeMs) {
      out.push({ name: b2.name, reason: `older than retention.maxAge ${retention.maxAge}` });
    }
  });
  const failedLimit = spec.failedBackupsHistoryLimit ?? DEFAULT_FAILED_HISTORY;
  backups.filter((b2) => b2.phase === "Failed").sort(newestFirst).slice(failedLimit).forEach((b2) => {
    out.push({ name: b2.name, reason: `failed, beyond failedBackupsHistoryLimit ${failedLimit}` });
  });
  return out;
}
function staleBackup(spec, createdAt, lastSuccess, now) {
  if (spec.suspend === true) return void 0;
  const cron = parseSchedule(spec);
  if (!(cron instanceof Y)) return void 0;
  const [last, before] = cron.previousRuns(2, now);
  if (last === void 0 || before === void 0 || before < createdAt) return void 0;
  const intervalMs = last.getTime() - before.getTime();
  const ageMs = now.getTime() - (lastSuccess ?? createdAt).getTime();
  return ageMs > 2 * intervalMs ? { ageMs, intervalMs } : void 0;
}
function countBetween(cron, after, before) {
  let n = 0;
  for (let t = cron.nextRun(after); t !== null && t < before && n < MAX_COUNTED_MISSED; t = cron.nextRun(t))
    n++;
  return n;
}
function planSchedule(input) {
  const { spec, now, backups } = input;
  const active = backups.filter(running).sort((a, b2) => a.scheduledTime.getTime() - b2.scheduledTime.getTime())[0]?.name;
  const base = {
    deletes: retentionDeletes(spec, backups, now, input.inUse),
    ...active === void 0 ? {} : { active }
  };
  const maxAge = spec.retention?.maxAge;
  if (maxAge !== void 0 && parseMaxAge(maxAge) === void 0) {
    return {
      ...base,
      deletes: [],
      decision: {
        type: "Invalid",
        field: "spec.retention.maxAge",
        message: `spec.retention.maxAge "${maxAge}" is not an age: write whole numbers with d, h, m or s, e.g. 7d or 36h`
      }
    };
  }
  const cron = parseSchedule(spec);
  if (!(cron instanceof Y)) return { ...base, decision: { type: "Invalid", ...cron } };
  if (spec.suspend) return { ...base, decision: { type: "Suspended" } };
  const handled = new Date(
    Math.max(
      input.createdAt.getTime(),
      input.lastScheduleTime?.getTime() ?? 0,
      input.lastMissedTime?.getTime() ?? 0
    )
  );
  const latest = cron.previousRuns(1, new Date(now.getTime() + 1e3)).find((t) => t <= now);
  const nextAfter = (t) => cron.nextRun(new Date(Math.max(t.getTime(), now.getTime(), handled.getTime())));
  const withNext = (plan, after) => {
    const next = nextAfter(after);
    return next === null ? plan : { ...plan, next };
  };
  if (latest === void 0 || latest <= handled)
    return withNext({ ...base, decision: { type: "NotDue" } }, now);
  const name = scheduledBackupName(input.name, latest);
  if (backups.some((b2) => b2.name === name)) {
    return withNext({ ...base, decision: { type: "AlreadyCreated", name, scheduledTime: latest } }, latest);
  }
  const missed = countBetween(cron, handled, latest);
  const deadline = spec.startingDeadlineSeconds;
  if (deadline !== void 0 && now.getTime() - latest.getTime() > deadline * 1e3) {
    return withNext({ ...base, decision: { type: "Missed", scheduledTime: latest, missed } }, latest);
  }
  if (active !== void 0) {
    return withNext({ ...base, decision: { type: "Running", active, scheduledTime: latest } }, latest);
  }
  return withNext({ ...base, decision: { type: "Create", name, scheduledTime: latest, missed } }, latest);
}

// src/reconcile/schedule/controller.ts
var SCHEDULE_LABEL = "etcd.capstan.dev/schedule";
function etcdBackupScheduleController(options = {}) {
  return controller({
    name: "etcdbackupschedule",
    for: EtcdBackupScheduleKind,
    // A backup's phase change re-plans its schedule (the next may wait on it; retention counts it).
    owns: [EtcdBackupKind],
    maxConcurrentReconciles: 2,
    reconcile: (req, ctx) => reconcileEtcdBackupSchedule(req, ctx, options)
  });
}
function ownedBackups(schedule, all) {
  const uid = schedule.metadata.uid;
  return all.filter((b2) => b2.metadata.ownerReferences?.some((r) => r.controller === true && r.uid === uid) === true).filter((b2) => b2.metadata.deletionTimestamp === void 0).map((b2) => {
    const scheduled = b2.metadata.annotations?.[SCHEDULED_TIME_ANNOTATION] ?? b2.metadata.creationTimestamp;
    const done = b2.status?.completionTime;
    return {
      name: b2.metadata.name ?? "",
      ...b2.status?.phase === void 0 ? {} : { phase: b2.status.phase },
      scheduledTime: new Date(scheduled ?? 0),
      ...done === void 0 ? {} : { completionTime: new Date(done) }
    };
  });
}
function scheduledBackup(schedule, name, scheduledTime) {
  const template = schedule.spec.backupTemplate;
  const backup = {
    apiVersion: EtcdBackupKind.apiVersion,
    kind: EtcdBackupKind.kind,
    metadata: {
      name,
      namespace: schedule.metadata.namespace ?? "",
      labels: {
        ...template.metadata?.labels,
        "app.kubernetes.io/managed-by": MANAGED_BY,
        [SCHEDULE_LABEL]: schedule.metadata.name ?? ""
      },
      annotations: {
        ...template.metadata?.annotations,
        [SCHEDULED_TIME_ANNOTATION]: scheduledTime.toISOString()
      }
    },
    spec: structuredClone(template.spec)
  };
  setControllerReference(schedule, EtcdBackupScheduleKind, backup);
  return backup;
}
async function reconcileEtcdBackupSchedule(req, ctx, options = {}) {
  const now = options.now ?? /* @__PURE__ */ new Date();
  const schedule = await ctx.cache.get(EtcdBackupScheduleKind, req.name, req.namespace);
  if (schedule === void 0 || schedule.metadata.deletionTimestamp !== void 0) {
    options.metrics?.forgetSchedule(req.namespace ?? "", req.name);
    return void 0;
  }
  const namespace = schedule.metadata.namespace ?? "";
  const all = await ctx.cache.list(EtcdBackupKind, { namespace });
  const backups = ownedBackups(schedule, all);
  const status = schedule.status ?? {};
  const plan = planSchedule({
    name: schedule.metadata.name ?? "",
    spec: schedule.spec,
    createdAt: new Date(schedule.metadata.creationTimestamp ?? 0),
    ...status.lastScheduleTime === void 0 ? {} : { lastScheduleTime: new Date(status.lastScheduleTime) },
    ...status.lastMissedTime === void 0 ? {} : { lastMissedTime: new Date(status.lastMissedTime) },
    backups,
    now,
    inUse: await observeBackupsInUse(ctx.cache, namespace)
  });
  for (const d of plan.deletes) {
    try {
      await ctx.client.delete(EtcdBackupKind, d.name, namespace, { signal: ctx.signal });
      ctx.recorder.event(
        schedule,
        "Normal",
        "BackupDeleted",
        "Retention",
        `deleted EtcdBackup ${d.name}: ${d.reason}`
      );
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }
  const next = { ...status };
  const decision = plan.decision;
  let active = plan.active;
  if (decision.type === "Create") {
    try {
      await ctx.client.create(
        EtcdBackupKind,
        scheduledBackup(schedule, decision.name, decision.scheduledTime),
        {
          signal: ctx.signal
        }
      );
    } catch (err) {
      if (!isAlreadyExists(err)) throw err;
    }
    const missed = decision.missed > 0 ? ` (${decision.missed} earlier scheduled times were skipped)` : "";
    ctx.recorder.event(
      schedule,
      decision.missed > 0 ? "Warning" : "Normal",
      "BackupCreated",
      "Schedule",
      `created EtcdBackup ${decision.name} for ${decision.scheduledTime.toISOString()}${missed}`
    );
    next.lastScheduleTime = decision.scheduledTime.toISOString();
    active = decision.name;
  } else if (decision.type === "AlreadyCreated") {
    next.lastScheduleTime = decision.scheduledTime.toISOString();
  } else if (decision.type === "Missed") {
    next.lastMissedTime = decision.scheduledTime.toISOString();
    ctx.recorder.event(
      schedule,
      "Warning",
      "MissedSchedule",
      "Schedule",
      `no backup for ${decision.scheduledTime.toISOString()}: not started within spec.startingDeadlineSeconds (${schedule.spec.startingDeadlineSeconds}s)${decision.missed > 0 ? `; ${decision.missed} earlier times were skipped too` : ""}`
    );
  } else if (decision.type === "Invalid" && findDegradedReason(status) !== "InvalidSchedule") {
    ctx.recorder.event(schedule, "Warning", "InvalidSchedule", "Schedule", decision.message);
  }
  if (plan.next === void 0) delete next.nextScheduleTime;
  else next.nextScheduleTime = plan.next.toISOString();
  if (active === void 0) delete next.active;
  else next.active = active;
  const deleted = new Set(plan.deletes.map((d) => d.name));
  const lastSuccess = backups.filter((b2) => b2.phase === "Succeeded" && !deleted.has(b2.name)).sort((a, b2) => (b2.completionTime?.getTime() ?? 0) - (a.completionTime?.getTime() ?? 0))[0];
  if (lastSuccess !== void 0) {
    next.lastSuccessfulBackup = lastSuccess.name;
    if (lastSuccess.completionTime !== void 0)
      next.lastSuccessfulTime = lastSuccess.completionTime.toISOString();
  }
  next.conditions = conditionsOf2(schedule, next, plan, backups, active, now);
  const degraded3 = next.conditions.find((c) => c.type === "Degraded");
  options.metrics?.scheduleObserved(
    namespace,
    req.name,
    degraded3?.status === "True" && degraded3.reason === "BackupStale"
  );
  if (schedule.metadata.generation !== void 0) next.observedGeneration = schedule.metadata.generation;
  const patch = statusMergePatch(schedule.status, next);
  if (patch !== void 0) {
    await ctx.client.patchStatus(EtcdBackupScheduleKind, req.name, req.namespace, patch, "merge", {
      signal: ctx.signal
    });
  }
  if (plan.next === void 0) return void 0;
  return { requeueAfter: Math.max(1e3, plan.next.getTime() - now.getTime()) };
}
function humanDuration(ms) {
  const units = [
    ["d", 864e5],
    ["h", 36e5],
    ["m", 6e4],
    ["s", 1e3]
  ];
  const parts = [];
  let rest = Math.max(0, Math.round(ms / 1e3) * 1e3);
  for (const [unit, size] of units) {
    if (rest >= size || parts.length === 0 && unit === "s") {
      parts.push(`${Math.floor(rest / size)}${unit}`);
      rest %= size;
    }
    if (parts.length === 2) break;
  }
  return parts.join(" ");
}
function findDegradedReason(status) {
  const d = status.conditions?.find((c) => c.type === "Degraded");
  return d?.status === "True" ? d.reason : void 0;
}
function conditionsOf2(schedule, status, plan, backups, active, now) {
  const generation = schedule.metadata.generation;
  const gen = generation === void 0 ? {} : { observedGeneration: generation };
  const finished = backups.filter((b2) => b2.phase === "Succeeded" || b2.phase === "Failed").sort((a, b2) => b2.scheduledTime.getTime() - a.scheduledTime.getTime())[0];
  const d = plan.decision;
  const missed = status.lastMissedTime !== void 0 && Date.parse(status.lastMissedTime) > Date.parse(status.lastScheduleTime ?? "1970-01-01T00:00:00Z") ? status.lastMissedTime : void 0;
  const stale = staleBackup(
    schedule.spec,
    new Date(schedule.metadata.creationTimestamp ?? 0),
    status.lastSuccessfulTime === void 0 ? void 0 : new Date(status.lastSuccessfulTime),
    now
  );
  const degraded3 = d.type === "Invalid" ? { status: "True", reason: "InvalidSchedule", message: d.message } : stale !== void 0 ? {
    status: "True",
    reason: "BackupStale",
    message: `${status.lastSuccessfulBackup === void 0 ? "no backup has succeeded since the schedule was created" : `the newest successful backup, ${status.lastSuccessfulBackup}, completed`} ${humanDuration(stale.ageMs)} ago, more than twice the schedule's interval (${humanDuration(stale.intervalMs)})${finished?.phase === "Failed" ? `; the last backup, ${finished.name}, failed: see its status` : ""}`
  } : missed !== void 0 ? {
    status: "True",
    reason: "MissedSchedule",
    message: `the backup for ${missed} was not started within spec.startingDeadlineSeconds (until the next one is created)`
  } : finished?.phase === "Failed" ? {
    status: "True",
    reason: "BackupFailed",
    message: `the last backup, ${finished.name}, failed: see its status`
  } : { status: "False", reason: "AsExpected", message: "" };
  const available = d.type === "Invalid" ? { status: "False", reason: "InvalidSchedule", message: d.message } : finished?.phase === "Succeeded" ? {
    status: "True",
    reason: "LastBackupSucceeded",
    message: `the last backup, ${finished.name}, succeeded`
  } : {
    status: "False",
    reason: finished === void 0 ? "NoBackupYet" : "LastBackupFailed",
    message: ""
  };
  const progressing = active === void 0 ? { status: "False", reason: d.type === "Suspended" ? "Suspended" : "Waiting", message: "" } : { status: "True", reason: "BackupRunning", message: `EtcdBackup ${active} is running` };
  let conditions = schedule.status?.conditions;
  conditions = setCondition(conditions, { type: "Available", ...available, ...gen }, now);
  conditions = setCondition(conditions, { type: "Progressing", ...progressing, ...gen }, now);
  conditions = setCondition(conditions, { type: "Degraded", ...degraded3, ...gen }, now);
  return conditions;
}

// src/main.ts
var jobSteps = /* @__PURE__ */ new Map([
  ["backup-upload", async () => (await import("./chunks/upload-ZUXNFTAL.js")).backupUploadCommand],
  ["backup-delete", async () => (await import("./chunks/delete-JISAPTYG.js")).backupDeleteCommand],
  ["backup-download", async () => (await import("./chunks/download-KGG4OPM2.js")).backupDownloadCommand],
  ["restore-finish", async () => (await import("./chunks/download-KGG4OPM2.js")).restoreFinishCommand]
]);
var step = jobSteps.get(process.argv[2] ?? "");
if (step !== void 0) {
  await (await step())(process.argv.slice(3)).then(
    () => process.exit(0),
    (err) => {
      process.stderr.write(`${err instanceof Error ? err.message : String(err)}
`);
      process.exit(1);
    }
  );
}
var cli = operatorCommandLine({
  name: "etcd-operator",
  description: "Capstan's etcd operator: EtcdCluster membership, scaling, recovery and rolling upgrades; EtcdBackups and schedules.",
  extra: {
    "backup-image": {
      type: "string",
      env: "ETCD_OPERATOR_BACKUP_IMAGE",
      default: DEFAULT_BACKUP_IMAGE,
      description: "image whose `backup-upload` subcommand the backup Jobs run (the operator's own image)"
    },
    "automatic-recovery-floor-seconds": {
      type: "string",
      env: "ETCD_OPERATOR_AUTOMATIC_RECOVERY_FLOOR_SECONDS",
      default: String(DEFAULT_AUTOMATIC_FLOOR_SECONDS),
      description: `least wait, in seconds (${MIN_AUTOMATIC_AFTER_SECONDS} or more), before spec.recovery.automatic recovers, whatever afterSeconds says: the cluster's node failover (eviction, volume detach) comes first`
    }
  }
});
var backupImage = cli.extra["backup-image"]?.trim() || DEFAULT_BACKUP_IMAGE;
var floorFlag = cli.extra["automatic-recovery-floor-seconds"];
var automaticRecoveryFloorSeconds = Number(floorFlag);
if (!Number.isInteger(automaticRecoveryFloorSeconds) || automaticRecoveryFloorSeconds < MIN_AUTOMATIC_AFTER_SECONDS) {
  process.stderr.write(
    `--automatic-recovery-floor-seconds (ETCD_OPERATOR_AUTOMATIC_RECOVERY_FLOOR_SECONDS) must be a whole number of seconds, at least ${MIN_AUTOMATIC_AFTER_SECONDS}: got ${JSON.stringify(floorFlag)}
`
  );
  process.exit(2);
}
var logger = createLogger({ name: "etcd-operator", level: cli.logLevel });
var mgr = new Manager({
  ...cli.manager,
  logger,
  // Cache only the operator's own Pods (members and backup Jobs' pods), PVCs, Services, PDBs and Jobs.
  cacheSelectors: etcdClusterCacheSelectors()
});
var metrics = new EtcdOperatorMetrics(mgr.metrics.registry);
var operatorNamespace = process.env.POD_NAMESPACE;
var operatorLabels = podSelectorLabels(process.env.POD_SELECTOR_LABELS);
mgr.add(
  etcdClusterController({
    metrics,
    maxConcurrentReconciles: cli.maxConcurrentReconciles,
    operatorImage: backupImage,
    automaticRecoveryFloorSeconds,
    ...operatorNamespace === void 0 || operatorNamespace === "" ? {} : {
      operatorPods: {
        namespace: operatorNamespace,
        labels: operatorLabels
      }
    }
  })
);
mgr.add(etcdBackupController({ operatorImage: backupImage, metrics }));
mgr.add(etcdBackupScheduleController({ metrics }));
logger.info(
  {
    namespace: cli.watchNamespace ?? "(all)",
    leaderElect: cli.leaderElect,
    metricsSecure: cli.metricsSecure,
    backupImage,
    automaticRecoveryFloorSeconds
  },
  "starting the etcd operator"
);
await mgr.start(shutdownSignal()).catch((err) => {
  logger.error({ err }, "etcd operator failed");
  process.exit(1);
});
