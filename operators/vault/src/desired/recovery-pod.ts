// The survivor's pod of a VaultRecovery: the ordinary server pod plus an init container that writes Vault's
// peers.json (integrated storage's outage recovery: `<raft path>/raft/peers.json`, a JSON list of
// {"id","address","non_voter"}) naming only the survivor, read by Vault as raft starts (at unseal) and then deleted by
// it. The file is written once per recovery: a marker beside it, named from the VaultRecovery's uid, stops a
// restarted pod (its init container runs again when its sandbox is recreated) from writing it after the others have
// rejoined. It refuses to write into a claim without raft data. Pure.

import { type PodObject, restrictedContainerSecurityContext } from "@capstan/core";
import type { VaultCluster } from "../api/vault-cluster.ts";
import { CLUSTER_PORT, podHost } from "./names.ts";
import { DATA_DIR, type PodSettings, VAULT_UID, vaultPod } from "./objects.ts";

/** Annotation on a survivor's pod made by a recovery: the VaultRecovery's name. */
export const RECOVERY_POD_ANNOTATION = "vault.capstan.dev/recovery";
/** The init container that writes peers.json. */
export const RECOVERY_INIT_CONTAINER = "raft-recovery";

/** One entry of peers.json. */
export interface RaftPeerEntry {
  id: string;
  address: string;
  non_voter: boolean;
}

/** peers.json naming only `pod` as a voter (its node ID is the pod name; its raft address the pod's DNS name:8201). */
export function peersJson(cluster: VaultCluster, pod: string): RaftPeerEntry[] {
  return [{ id: pod, address: `${podHost(cluster, pod)}:${CLUSTER_PORT}`, non_voter: false }];
}

/** What the init container's script writes, and where. */
export interface RecoveryScriptInput {
  /** The raft storage path (the pods': DATA_DIR). */
  dataDir: string;
  /** peers.json's entries (the pods': {@link peersJson}). */
  peers: RaftPeerEntry[];
  /** The VaultRecovery's name (for the log) and uid (the marker's name). */
  request: string;
  uid: string;
}

/** The init container's script: peers.json once for recovery `uid`, only into a directory that holds raft data. */
export function recoveryScript(input: RecoveryScriptInput): string {
  const { dataDir, request } = input;
  const marker = `${dataDir}/raft/.capstan-recovery-${input.uid}`;
  const json = JSON.stringify(input.peers);
  return `set -eu
if [ -e "${marker}" ]; then
  echo "peers.json of VaultRecovery ${request} was written before (${marker}): not again"
  exit 0
fi
if [ ! -e "${dataDir}/vault.db" ] || [ ! -e "${dataDir}/raft/raft.db" ]; then
  echo "no raft data in ${dataDir} (vault.db, raft/raft.db): refusing to write peers.json" >&2
  exit 1
fi
printf '%s\\n' '${json}' >"${dataDir}/raft/peers.json.tmp"
mv "${dataDir}/raft/peers.json.tmp" "${dataDir}/raft/peers.json"
touch "${marker}"
echo "wrote ${dataDir}/raft/peers.json for VaultRecovery ${request}: ${json}"
`;
}

/**
 * The survivor's pod: {@link vaultPod} with the init container (the helper image the pods' reloader sidecar runs,
 * as the same user as Vault) and the recovery's annotation. Its pod template hash is the ordinary one: once the
 * recovery is over it is not restarted for it (the marker keeps the init container from writing again).
 */
export function recoveryPod(
  cluster: VaultCluster,
  pod: string,
  settings: PodSettings,
  request: { name: string; uid: string },
): PodObject {
  const base = vaultPod(cluster, pod, settings);
  const spec = base.spec;
  if (spec === undefined) throw new Error("vaultPod made a pod without a spec");
  spec.initContainers = [
    {
      name: RECOVERY_INIT_CONTAINER,
      image: settings.reloaderImage,
      command: [
        "sh",
        "-c",
        recoveryScript({
          dataDir: DATA_DIR,
          peers: peersJson(cluster, pod),
          request: request.name,
          uid: request.uid,
        }),
      ],
      resources: { requests: { cpu: "5m", memory: "8Mi" }, limits: { memory: "32Mi" } },
      securityContext: restrictedContainerSecurityContext(VAULT_UID),
      terminationMessagePolicy: "FallbackToLogsOnError",
      volumeMounts: [{ name: "data", mountPath: DATA_DIR }],
    },
  ];
  base.metadata.annotations = { ...base.metadata.annotations, [RECOVERY_POD_ANNOTATION]: request.name };
  return base;
}
