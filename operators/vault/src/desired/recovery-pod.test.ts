// The survivor's pod of a VaultRecovery: the ordinary server pod plus the peers.json init container, restricted.
import { describe, expect, it } from "vitest";
import type { VaultCluster } from "../api/vault-cluster.ts";
import { POD_TEMPLATE_HASH_ANNOTATION, podTemplateHash, vaultPod } from "./objects.ts";
import { peersJson, RECOVERY_INIT_CONTAINER, RECOVERY_POD_ANNOTATION, recoveryPod } from "./recovery-pod.ts";

const cluster: VaultCluster = {
  apiVersion: "vault.capstan.dev/v1alpha1",
  kind: "VaultCluster",
  metadata: { name: "demo", namespace: "ns", uid: "u1" },
  spec: {
    replicas: 3,
    version: "1.14.8",
    repository: "hashicorp/vault",
    storage: { size: "1Gi" },
    tls: { duration: "2160h", renewBefore: "720h" },
    unseal: { shares: 3, threshold: 2, keepRootToken: false, retainKeysOnDelete: true },
  },
};
const settings = { reloaderImage: "busybox:1.37" };

describe("recoveryPod", () => {
  const pod = recoveryPod(cluster, "demo-0", settings, { name: "dr", uid: "r-uid" });
  const init = pod.spec?.initContainers?.find((c) => c.name === RECOVERY_INIT_CONTAINER);

  it("is the server pod, its template hash unchanged (not restarted for it later), marked with the request", () => {
    const plain = vaultPod(cluster, "demo-0", settings);
    expect(pod.spec?.containers).toEqual(plain.spec?.containers);
    expect(pod.spec?.volumes).toEqual(plain.spec?.volumes);
    expect(pod.metadata.annotations?.[POD_TEMPLATE_HASH_ANNOTATION]).toBe(podTemplateHash(cluster, settings));
    expect(pod.metadata.annotations?.[RECOVERY_POD_ANNOTATION]).toBe("dr");
  });

  it("writes peers.json naming only the survivor, by its node ID and raft address, once per request uid", () => {
    expect(peersJson(cluster, "demo-0")).toEqual([
      { id: "demo-0", address: "demo-0.demo-internal.ns.svc:8201", non_voter: false },
    ]);
    const script = init?.command?.[2] ?? "";
    expect(init?.command?.slice(0, 2)).toEqual(["sh", "-c"]);
    expect(script).toContain(
      '[{"id":"demo-0","address":"demo-0.demo-internal.ns.svc:8201","non_voter":false}]',
    );
    expect(script).toContain("/vault/data/raft/.capstan-recovery-r-uid");
    expect(init?.volumeMounts).toEqual([{ name: "data", mountPath: "/vault/data" }]);
    expect(init?.image).toBe("busybox:1.37");
  });

  it("runs restricted, as vault's uid", () => {
    expect(init?.securityContext).toMatchObject({
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      runAsNonRoot: true,
      runAsUser: 100,
      capabilities: { drop: ["ALL"] },
    });
  });
});
