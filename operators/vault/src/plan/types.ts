/** What the kubelet reports about a vault container that does not run. */
export interface ContainerFailure {
  /** The container's waiting reason: CrashLoopBackOff, CreateContainerConfigError, RunContainerError... */
  reason: string;
  /** The kubelet's message for it, when it gave one. */
  message?: string;
  /** containerStatuses[].restartCount. */
  restarts: number;
  /** How its last run ended (lastState.terminated), when it ran. */
  lastExit?: { exitCode: number; reason?: string; message?: string };
}

/** What GET /v1/sys/seal-status said about a sealed pod. */
export interface SealProgress {
  /** Keys needed (t). */
  threshold: number;
  /** Key shares made at init (n). */
  shares: number;
  /** Keys entered so far towards the threshold. */
  progress: number;
}

/** Autopilot's configuration in Vault's names, as its POST takes it; durations are Go durations. */
export interface AutopilotConfig {
  cleanup_dead_servers: boolean;
  dead_server_last_contact_threshold: string;
  last_contact_threshold: string;
  max_trailing_logs: number;
  /** Only when spec.autopilot.minQuorum is set (Vault's default is 0: "not set"). */
  min_quorum?: number;
  server_stabilization_time: string;
}

/** The configuration the active node answered (asked only when spec.autopilot is set), or why there is none. */
export type ObservedAutopilot =
  | { config: AutopilotConfig & { min_quorum: number } }
  /** Vault answered 403: the operator's policy lacks the path (written by an older operator). */
  | { forbidden: true; error: string }
  | { error: string };

/** What Vault's /v1/sys/health said about one pod, or why it could not be asked. */
export type PodVault =
  | {
      reachable: true;
      initialized: boolean;
      sealed: boolean;
      /** An unsealed node that is not the active one. */
      standby: boolean;
      version: string;
      clusterID?: string;
    }
  | {
      reachable: false;
      error: string;
      /** It answered, with a certificate the operator's client refuses (no trusted CA signs it, or expired). */
      certificateRejected?: true;
    };

/** One Vault pod as Kubernetes and Vault show it. */
export interface ObservedPod {
  /** `<cluster>-<ordinal>`; also the raft node ID. */
  name: string;
  ordinal: number;
  /** The pod's Ready condition (readiness means unsealed: see the readiness probe). */
  ready: boolean;
  /** The pod runs another image than spec asks for; `image` is the one it runs. */
  image: string;
  /**
   * The image of the vault container the kubelet runs (containerStatuses[].image). After an in-place image change
   * the old container runs (and stays ready) until the kubelet restarts it: until then the pod is not upgraded.
   */
  runningImage?: string;
  /** The pod was built from another pod template (podTemplate, config, TLS Secret) than the current one. */
  templateOutdated?: boolean;
  /**
   * The Secret its listener certificate is mounted from (its volume, fixed when the pod was made): another one than
   * spec's is a switch of the certificate's source that this pod has not been restarted for.
   */
  tlsSecret?: string;
  /** Since when it is being deleted (deletionTimestamp). */
  terminatingSince?: Date;
  /** Since when the scheduler finds no node for it. */
  unschedulableSince?: Date;
  /** Since when it is Pending (created and not yet running). */
  pendingSince?: Date;
  /** Since when its Ready condition is True (its lastTransitionTime), while it is ready. */
  readySince?: Date;
  /** Its vault container cannot pull its image. */
  imagePullError?: { image: string; reason: string };
  /** Its vault container does not run (crash loop, config or runtime error), as the kubelet reports it. */
  containerFailure?: ContainerFailure;
  /** For a sealed, initialized pod: its seal-status (threshold and progress), when it answered it. */
  seal?: SealProgress;
  /** It was built with Vault's Kubernetes service registration (pods of an older operator were not). */
  registers?: boolean;
  /** Vault has labelled it (vault-initialized is set): its registration reached the API server. */
  registered?: boolean;
  vault: PodVault;
}

/** One server of the raft configuration, as the active node reports it. */
export interface ObservedPeer {
  nodeID: string;
  address: string;
  voter: boolean;
  leader: boolean;
}

/** The keys Secret `<name>-unseal-keys` as the operator reads it. */
export interface ObservedKeys {
  /** Number of unseal keys the Secret holds (0: none). */
  unsealKeys: number;
  rootToken: boolean;
  operatorToken: boolean;
  /** The cluster_id recorded beside the keys (the cluster they unseal). */
  clusterID?: string;
}

/** The operator token as the active node judged it (lookup-self), when it was asked. */
export type ObservedToken =
  | { valid: true; ttlSeconds: number; periodSeconds: number }
  | { valid: false; error: string };

/** Everything the planner reads. */
export interface Observed {
  /** Pods that exist (including terminating ones), by ordinal. */
  pods: ObservedPod[];
  /** Names of the data claims that exist (and are not being deleted). */
  claims: string[];
  /** Names of the data claims being deleted (a deletionTimestamp; pvc-protection holds them while a pod uses them). */
  claimsTerminating?: string[];
  /** The storage each data claim requests (spec.resources.requests.storage), by claim name. */
  claimSizes?: Record<string, string>;
  /** The VaultCluster's namespace, for the commands messages suggest. */
  namespace?: string;
  /** The keys Secret, when it exists. */
  keys?: ObservedKeys;
  /**
   * When an init was started: the marker the operator writes on pod 0's data claim before PUT /v1/sys/init
   * (the keys Secret is created only with the keys, right after the answer).
   */
  initStartedAt?: Date;
  /** The raft configuration, when an active node answered it; else why not. */
  raft: { servers: ObservedPeer[] } | { error: string };
  /** The operator token's state, when the keys hold one and an active node was asked. */
  token?: ObservedToken;
  /** The cluster_id recorded in status (kept once known). */
  knownClusterID?: string;
  /** Number of raft voters last seen (status.raftPeers), to judge quorum when no active node answers. */
  knownVoters?: number;
  /** The lowest version every pod ran when last recorded (status.currentVersion): a downgrade below it is refused. */
  knownVersion?: string;
  /** Autopilot's configuration through the active node, when spec.autopilot is set and one was asked. */
  autopilot?: ObservedAutopilot;
  /**
   * The API server's answer when it refused the pods' ServiceAccount, Role or RoleBinding (the operator's RBAC lags
   * its version, or an admission policy): pods are then built without Vault's service registration.
   */
  registrationRefused?: string;
  /** The listener certificate is in place (operator-managed or the user's Secret); else why not. */
  tls: { ready: true } | { ready: false; reason: string; message: string };
}

/** Planner settings (tests shorten them). */
export interface PlanOptions {
  /** A marker older than this with every pod still uninitialized means the init never reached Vault. */
  initGraceMs?: number;
  /** A pod unschedulable this long is reported Degraded. */
  unschedulableAfterMs?: number;
  /** A pod still Pending this long (e.g. its claim cannot bind) is reported Degraded. */
  pendingAfterMs?: number;
  /** A pod terminating this long is reported Degraded (never force-deleted). */
  terminatingAfterMs?: number;
  /**
   * An unsealed pod that has been Ready this long without being in the raft configuration is no peer (a join
   * completes seconds after the unseal): it is wiped and joins again.
   */
  notPeerAfterMs?: number;
  /** A pod Ready this long that Vault's service registration has not labelled is reported Degraded. */
  registrationAfterMs?: number;
}

/** The next step. Every step carries a user-facing message for events and logs. */
export type Step =
  /** Create a pod (and its data claim if missing): the first pod, a scale-out, or a pod gone that had data. */
  | { type: "CreatePod"; pod: string; reason: "Bootstrap" | "ScaleOut" | "Restart"; message: string }
  /** Write the init-started marker, PUT /v1/sys/init on `pod`, write the keys to the Secret. */
  | { type: "InitVault"; pod: string; message: string }
  /** Submit the unseal keys to a sealed pod. */
  | { type: "Unseal"; pod: string; message: string }
  /** POST /v1/sys/storage/raft/join on an uninitialized pod, towards the active pod `leader`. */
  | { type: "JoinRaft"; pod: string; leader: string; message: string }
  /** Remove the raft peer `nodeID` through the active pod `via`. */
  | {
      type: "RemovePeer";
      nodeID: string;
      via: string;
      reason: "ScaleIn" | "DataLost" | "Orphan" | "ClaimLost";
      message: string;
    }
  /** Delete a pod (and, on scale-in, its claim): only once its peer is out of the raft configuration. */
  | {
      type: "DeletePod";
      pod: string;
      deleteClaim: boolean;
      reason: "ScaleIn" | "Restart" | "ClaimLost" | "NotAPeer";
      message: string;
    }
  /** PUT /v1/sys/step-down on the active pod, before it is removed, upgraded or restarted. */
  | { type: "StepDown"; pod: string; message: string }
  /** Change one pod's image to spec's (the kubelet restarts vault on its data; it comes back sealed). */
  | { type: "UpgradePod"; pod: string; from: string; to: string; message: string }
  /** With the root token: write the operator policy, create the operator's periodic orphan token, keep it. */
  | { type: "BootstrapToken"; pod: string; message: string }
  /** Revoke the initial root token and drop it from the Secret (spec.unseal.keepRootToken false). */
  | { type: "RevokeRootToken"; pod: string; message: string }
  /** Generate a root token with the unseal keys (sys/generate-root) and keep it: the operator token was lost. */
  | { type: "RegenerateRootToken"; pod: string; message: string }
  /** POST sys/storage/raft/autopilot/configuration through the active pod (only the fields in `config`). */
  | { type: "ConfigureAutopilot"; pod: string; config: Partial<AutopilotConfig>; message: string }
  /** Renew the operator token (less than half of its period left). */
  | { type: "RenewToken"; pod: string; message: string }
  /** Nothing safe to do now; plan again later. */
  | { type: "Wait"; reason: string; message: string }
  /** Something only a human can resolve; nothing is done until it changes. */
  | { type: "Degraded"; reason: string; message: string; pods?: string[] }
  /** The cluster matches the spec. */
  | { type: "InSync"; message: string };
