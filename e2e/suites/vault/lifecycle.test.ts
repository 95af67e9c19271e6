// A VaultCluster's first life under the chart-installed operator, in namespaces that enforce Pod Security
// "restricted": 3 pods initialized once, unsealed, one active and two standbys, the status and objects the
// contract names, and a KV secret written through <name>-active read back from a standby (request forwarding).
// Last, with the operator scaled to 0, the active pod is deleted: <name>-active follows the new leader by Vault's
// own service registration (the pods label themselves), with no operator in the path.
import {
  type Client,
  EndpointSlice,
  Namespace,
  PersistentVolumeClaim,
  Pod,
  PodDisruptionBudget,
  Role,
  RoleBinding,
  Service,
  ServiceAccount,
} from "@capstan/core";
import { connect, createNamespace, eventually, type TestNamespace } from "@capstan/testing";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  installOperator,
  type OperatorRelease,
  operatorLogs,
  operatorPods,
  scaleOperator,
  vaultSuitesEnabled,
} from "./fixtures/operator-release.ts";
import { startReader } from "./fixtures/traffic.ts";
import { traffic } from "./fixtures/traffic-report.ts";
import { names, VaultClusterKind } from "./fixtures/vault-api.ts";
import {
  condition,
  initCount,
  keysSecret,
  ownedObjects,
  podReady,
  podTarget,
  printFailureReport,
  serviceTarget,
  tearDownSuite,
  vaultCluster,
  waitAvailable,
  waitVault,
} from "./fixtures/vault-cluster.ts";
import { enableKv, health, kvGet, kvPut } from "./fixtures/vault-http.ts";

const name = "life";
const restricted = { "pod-security.kubernetes.io/enforce": "restricted" };
const minutes = (n: number) => n * 60_000;

let client: Client;
let opNs: TestNamespace;
let clusterNs: TestNamespace;
let op: OperatorRelease | undefined;
let ns = "";

describe.skipIf(!vaultSuitesEnabled)(
  "VaultCluster lifecycle, in namespaces enforcing Pod Security restricted",
  () => {
    beforeAll(async () => {
      ({ client } = connect());
      opNs = await createNamespace(client, "vault-life-op", restricted);
      clusterNs = await createNamespace(client, "vault-life", restricted);
      ns = clusterNs.name;
      op = await installOperator(client, opNs.name, ns).catch(async (err: unknown) => {
        // What kept the operator from becoming ready: its pods' state and logs.
        const release = { release: "vault-operator", namespace: opNs.name };
        for (const p of await operatorPods(client, release as OperatorRelease).catch(() => [])) {
          console.error(
            `${p.metadata.name}: ${JSON.stringify(p.status?.containerStatuses ?? p.status?.conditions)}`,
          );
        }
        console.error(
          await operatorLogs(client, release as OperatorRelease).catch((e: unknown) => String(e)),
        );
        throw err;
      });
    }, minutes(5));

    afterAll(() => tearDownSuite(client, [{ namespace: ns, name }], op, [clusterNs, opNs]), minutes(5));

    beforeEach(({ onTestFailed }) => {
      onTestFailed(() => printFailureReport(client, ns, name, op));
    });

    it(
      "3 pods are initialized once, unsealed, one active and two standbys, as Vault and the status both say",
      async () => {
        for (const n of [opNs.name, ns]) {
          const labels = (await client.get(Namespace, n)).metadata.labels ?? {};
          expect(labels["pod-security.kubernetes.io/enforce"], `namespace ${n}`).toBe("restricted");
        }
        const operator = op ? await operatorPods(client, op) : [];
        expect(operator.length).toBeGreaterThan(0);
        expect(operator.every(podReady)).toBe(true);

        await client.create(
          VaultClusterKind,
          vaultCluster(ns, name, { unseal: { shares: 5, threshold: 3 } }),
        );
        const cluster = await waitAvailable(client, ns, name, 3, minutes(6));
        const view = await waitVault(client, ns, name, 3);

        const status = cluster.status ?? {};
        expect(status.phase).toBe("Running");
        expect(status.currentVersion).toBe("1.14.8");
        expect(status.replicas).toBe(3);
        expect(status.endpoint).toBe(`https://${name}.${ns}.svc:8200`);
        expect(status.clusterID).toBe(view.clusterId);
        expect(status.selector).toContain(`app.kubernetes.io/instance=${name}`);
        for (const type of ["Initialized", "TLSReady"])
          expect(condition(cluster, type)?.status, type).toBe("True");
        expect(condition(cluster, "Sealed")?.status).toBe("False");
        expect(condition(cluster, "Degraded")?.status).not.toBe("True");
        for (const v of view.versions.values()) expect(v).toBe("1.14.8");
        // The status follows Vault (it may lag a change by a reconcile).
        await eventually(
          async () => {
            const c = await client.get(VaultClusterKind, name, ns);
            expect(c.status?.active).toBe(view.active);
            expect([...(c.status?.standbys ?? [])].sort()).toEqual(view.standbys);
            expect(c.status?.raftPeers?.map((p) => p.nodeID).sort()).toEqual([...view.targets.keys()]);
            expect(c.status?.raftPeers?.filter((p) => p.leader).map((p) => p.nodeID)).toEqual([view.active]);
          },
          { timeoutMs: 60_000, intervalMs: 1_000, message: "status.active/standbys/raftPeers are Vault's" },
        );

        // The keys Secret: 5 shares, no more; the root token only because the suite asked to keep it.
        const keys = await keysSecret(client, ns, name);
        expect(
          Object.keys(keys)
            .filter((k) => k.startsWith("unseal-key-"))
            .sort(),
        ).toEqual([0, 1, 2, 3, 4].map((i) => `unseal-key-${i}`));
        expect(keys["operator-token"]).toBeTruthy();
        expect(keys["root-token"]).toBeTruthy();
        // Initialized exactly once.
        expect(await initCount(client, ns, name)).toBe(1);
      },
      minutes(8),
    );

    it("makes the objects the contract names, labelled, and pods that pass Pod Security restricted", async () => {
      const n = names(name);
      const pods = [0, 1, 2].map(n.pod);
      const owned = await ownedObjects(client, ns, name);
      expect(owned.pods).toEqual(pods);
      expect(owned.pvcs).toEqual(pods.map(n.claim).sort());
      expect(owned.services).toEqual([n.clientService, n.activeService, n.internalService].sort());
      expect(owned.configMaps).toEqual([n.config]);
      expect(owned.pdbs).toEqual([n.pdb]);
      const pdb = await client.get(PodDisruptionBudget, n.pdb, ns);
      expect(pdb.spec?.selector?.matchLabels?.["app.kubernetes.io/instance"]).toBe(name);
      for (const pvc of owned.pvcs) {
        expect((await client.get(PersistentVolumeClaim, pvc, ns)).status?.phase, pvc).toBe("Bound");
      }
      const internal = await client.get(Service, n.internalService, ns);
      expect(internal.spec?.clusterIP).toBe("None");
      expect(internal.spec?.publishNotReadyAddresses).toBe(true);
      expect(internal.spec?.ports?.map((p) => [p.name, p.port]).sort()).toEqual([
        ["cluster", 8201],
        ["https", 8200],
      ]);
      // -active follows Vault's own label (its service registration), not the operator's.
      const active = await client.get(Service, n.activeService, ns);
      expect(active.spec?.selector).toEqual({
        "app.kubernetes.io/name": "vault",
        "app.kubernetes.io/instance": name,
        "vault-active": "true",
      });
      // What the pods' registration runs as: a ServiceAccount of the cluster's, allowed to get and patch only its pods.
      const sa = await client.get(ServiceAccount, name, ns);
      expect(sa.automountServiceAccountToken).toBe(false);
      expect((await client.get(Role, name, ns)).rules).toEqual([
        { apiGroups: [""], resources: ["pods"], resourceNames: pods, verbs: ["get", "patch"] },
      ]);
      expect((await client.get(RoleBinding, name, ns)).subjects).toEqual([
        { kind: "ServiceAccount", name, namespace: ns },
      ]);
      const view = await waitVault(client, ns, name, 3);
      for (const podName of pods) {
        const pod = await client.get(Pod, podName, ns);
        expect(pod.spec?.serviceAccountName, podName).toBe(name);
        // Vault labelled its own pod: active or not, unsealed, initialized, its version.
        expect(pod.metadata.labels, podName).toMatchObject({
          "vault-active": String(podName === view.active),
          "vault-sealed": "false",
          "vault-initialized": "true",
          "vault-version": "1.14.8",
        });
        // The API token is in the vault container only.
        const tokenMounts = (pod.spec?.containers ?? [])
          .filter((c) =>
            c.volumeMounts?.some((m) => m.mountPath === "/var/run/secrets/kubernetes.io/serviceaccount"),
          )
          .map((c) => c.name);
        expect(tokenMounts, podName).toEqual(["vault"]);
        // Admitted under "restricted"; the rest of what the contract asks of the pod spec.
        expect(pod.spec?.securityContext?.runAsNonRoot, podName).toBe(true);
        expect(pod.spec?.securityContext?.seccompProfile?.type, podName).toBe("RuntimeDefault");
        expect(pod.spec?.shareProcessNamespace, podName).toBe(true);
        expect(pod.spec?.containers.length, `${podName}: vault and the reloader`).toBe(2);
        for (const c of pod.spec?.containers ?? []) {
          expect(c.securityContext?.allowPrivilegeEscalation, `${podName}/${c.name}`).toBe(false);
          expect(c.securityContext?.capabilities?.drop, `${podName}/${c.name}`).toEqual(["ALL"]);
          expect(c.securityContext?.readOnlyRootFilesystem, `${podName}/${c.name}`).toBe(true);
        }
      }
    });

    it("a KV secret written through <name>-active is read back from each standby (request forwarding)", async () => {
      const view = await waitVault(client, ns, name, 3);
      const activeSvc = await serviceTarget(client, ns, names(name).activeService, view.ca, name);
      await enableKv(activeSvc, view.token);
      const version = await kvPut(activeSvc, view.token, "lifecycle/greeting", { hello: "world" });
      expect(version).toBeGreaterThan(0);
      expect(view.standbys).toHaveLength(2);
      for (const standby of view.standbys) {
        const pod = view.pods.find((p) => p.metadata.name === standby)!;
        expect(
          await kvGet(podTarget(pod, view.ca, ns, name), view.token, "lifecycle/greeting"),
          standby,
        ).toEqual({
          hello: "world",
        });
      }
      // And through the client Service (any unsealed pod).
      const clientSvc = await serviceTarget(client, ns, names(name).clientService, view.ca, name);
      expect(await kvGet(clientSvc, view.token, "lifecycle/greeting")).toEqual({ hello: "world" });
    });

    it(
      "with the operator scaled to 0, <name>-active follows a new leader when the active pod is deleted",
      async () => {
        if (op === undefined) throw new Error("no operator release");
        const n = names(name);
        const view = await waitVault(client, ns, name, 3);
        const activeSvc = await serviceTarget(client, ns, n.activeService, view.ca, name);
        // The endpoints of <name>-active: the pods behind its ready addresses.
        const endpoints = async () => {
          const slices = await client.list(EndpointSlice, {
            namespace: ns,
            labelSelector: `kubernetes.io/service-name=${n.activeService}`,
          });
          return slices.items
            .flatMap((s) => s.endpoints ?? [])
            .filter((e) => e.conditions?.ready !== false)
            .map((e) => e.targetRef?.name ?? "")
            .sort();
        };
        expect(await endpoints()).toEqual([view.active]);

        await scaleOperator(client, op, 0);
        // A reader through <name>-active while it happens: how many reads fail, over how long.
        const reader = startReader({
          target: async () => activeSvc,
          token: view.token,
          key: "lifecycle/greeting",
          want: { hello: "world" },
        });
        try {
          await eventually(() => reader.outcomes().some((o) => o.error === undefined), {
            timeoutMs: 30_000,
            message: "the reader reads",
          });
          const deletedAt = Date.now();
          await client.delete(Pod, view.active, ns);
          let followedAt = 0;
          const leader = await eventually(
            async () => {
              const now = await endpoints();
              expect(now).toHaveLength(1);
              expect(now[0]).not.toBe(view.active);
              // The pod behind it is the one Vault says is active.
              const pod = view.pods.find((p) => p.metadata.name === now[0])!;
              expect((await health(podTarget(pod, view.ca, ns, name))).code).toBe(200);
              followedAt ||= Date.now();
              return now[0]!;
            },
            {
              timeoutMs: 60_000,
              intervalMs: 250,
              message: `${n.activeService} points at the new active pod`,
            },
          );
          console.log(
            `active ${view.active} deleted with no operator running: ${n.activeService} pointed at the new active ${leader} after ${((followedAt - deletedAt) / 1000).toFixed(1)}s`,
          );
          // And requests through it reach Vault's active node, once kube-proxy has the new endpoint in its rules (the
          // EndpointSlice above changes first; a request in between still goes to the deleted pod's address).
          await eventually(
            async () =>
              expect(await kvGet(activeSvc, view.token, "lifecycle/greeting", 2_000)).toEqual({
                hello: "world",
              }),
            {
              timeoutMs: 30_000,
              intervalMs: 250,
              message: `a read through ${n.activeService} after the failover`,
            },
          );
          const recovered = Date.now();
          await eventually(() => reader.outcomes().some((o) => o.at > recovered && o.error === undefined), {
            timeoutMs: 30_000,
            message: "the reader reads again",
          });
          console.log(traffic("failover reader", await reader.stop(), { deletedAt, followedAt }));
        } finally {
          await reader.stop();
          // The operator back: it makes the deleted pod again on its claim and unseals it.
          await scaleOperator(client, op, 1);
        }
        await waitVault(client, ns, name, 3, minutes(5));
      },
      minutes(10),
    );
  },
);
