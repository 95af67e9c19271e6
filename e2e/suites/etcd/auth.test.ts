// etcd authentication on the real node: the API server defaults spec.auth.enabled and refuses a malformed Secret name; a cluster of 3 with
// spec.auth.enabled gets a root Secret the operator made (not owned by the cluster), auth on, and status.auth
// Enabled; an unauthenticated put is refused while the Secret's root password works; a wrong password named in
// spec.auth.rootSecretRef is reported as Degraded naming the field, and the right one clears it; the operator
// scales the cluster 3 -> 4 with auth on.
import { type Client, isInvalid, Secret } from "@capstan/core";
import { connect, createNamespace, eventually, type TestNamespace } from "@capstan/testing";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  condition,
  etcdCluster,
  printFailureReport,
  readyEndpoints,
  tearDownSuite,
  waitAvailable,
} from "./fixtures/etcd-cluster.ts";
import {
  EtcdAuthError,
  EtcdClient,
  EtcdClusterKind,
  ROOT_PASSWORD_KEY,
  rootSecretName,
} from "./fixtures/operator-api.ts";
import { etcdSuitesEnabled, installOperator, type OperatorRelease } from "./fixtures/operator-release.ts";

const name = "auth";
const minutes = (n: number) => n * 60_000;

let client: Client;
let nsObj: TestNamespace;
let op: OperatorRelease | undefined;
let ns = "";

/** The root password in the Secret the operator made. */
async function rootPassword(): Promise<string> {
  const secret = await client.get(Secret, rootSecretName(etcdCluster(ns, name)), ns);
  return Buffer.from(secret.data?.[ROOT_PASSWORD_KEY] ?? "", "base64").toString("utf8");
}

/** The message of a write the API server must refuse as Invalid. */
async function rejection(p: Promise<unknown>): Promise<string> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err, "the API server accepted an invalid spec.auth").toBeDefined();
  expect(isInvalid(err), `want 422 Invalid, got ${String(err)}`).toBe(true);
  return (err as Error).message;
}

describe.skipIf(!etcdSuitesEnabled)("EtcdCluster with etcd authentication", () => {
  beforeAll(async () => {
    ({ client } = connect());
    nsObj = await createNamespace(client, "etcd-auth");
    ns = nsObj.name;
    op = await installOperator(client, ns, { watchNamespace: ns });
    await client.create(EtcdClusterKind, etcdCluster(ns, name, { auth: { enabled: true } }));
  }, minutes(5));

  afterAll(() => tearDownSuite(client, { namespace: ns, name }, op, [nsObj]), minutes(5));

  beforeEach(({ onTestFailed }) => {
    onTestFailed(() => printFailureReport(client, ns, name, op));
  });

  it("defaults spec.auth.enabled to false and refuses a malformed Secret name", async () => {
    const paused = (n: string, auth: unknown) => {
      const obj = etcdCluster(ns, n, { paused: true });
      return client.create(EtcdClusterKind, { ...obj, spec: { ...obj.spec, auth } as typeof obj.spec });
    };
    const defaulted = await paused("defaulted", { rootSecretRef: { name: "x" } });
    expect(defaulted.spec.auth).toEqual({ enabled: false, rootSecretRef: { name: "x" } });
    expect(
      await rejection(paused("bad-name", { enabled: true, rootSecretRef: { name: "Not_A_Name" } })),
    ).toMatch(/auth\.rootSecretRef\.name must be a Secret name/);
  });

  it(
    "turns auth on for a cluster of 3, refuses an unauthenticated put, reports a wrong password, scales 3 -> 4",
    async () => {
      await waitAvailable(client, ns, name, 3, minutes(4));
      await eventually(
        async () => {
          const c = await client.get(EtcdClusterKind, name, ns);
          if (c.status?.auth !== "Enabled") throw new Error(`status.auth is ${c.status?.auth}`);
        },
        { timeoutMs: minutes(2), message: "status.auth is Enabled" },
      );

      // The Secret the operator made outlives the cluster: no owner reference.
      const secret = await client.get(Secret, rootSecretName(etcdCluster(ns, name)), ns);
      expect(secret.metadata.ownerReferences ?? []).toEqual([]);
      const password = await rootPassword();
      expect(password.length).toBeGreaterThanOrEqual(24);

      const endpoints = await readyEndpoints(client, ns, name);
      const anonymous = new EtcdClient({ endpoints, timeoutMs: 10_000 });
      const refused = await anonymous.put("/auth/anonymous", "x").catch((err: unknown) => err);
      expect(refused).toBeInstanceOf(EtcdAuthError);
      expect((refused as Error).message).toContain("user name is empty");
      const root = new EtcdClient({ endpoints, timeoutMs: 10_000, auth: { username: "root", password } });
      await root.put("/auth/key", "value");
      expect(await root.get("/auth/key")).toBe("value");

      // A Secret with another password: Degraded naming spec.auth.rootSecretRef; the right one clears it.
      await client.create(Secret, {
        apiVersion: "v1",
        kind: "Secret",
        metadata: { name: "wrong-root", namespace: ns },
        stringData: { [ROOT_PASSWORD_KEY]: "not-the-password" },
      });
      await client.patch(EtcdClusterKind, name, ns, {
        spec: { auth: { enabled: true, rootSecretRef: { name: "wrong-root" } } },
      });
      await eventually(
        async () => {
          const c = await client.get(EtcdClusterKind, name, ns);
          const degraded = condition(c, "Degraded");
          if (degraded?.status !== "True" || degraded.reason !== "AuthFailed")
            throw new Error(`Degraded ${degraded?.status} ${degraded?.reason}`);
          expect(degraded.message).toMatch(/^spec\.auth\.rootSecretRef: etcd rejects the root password/);
          expect(degraded.message).not.toContain("not-the-password");
        },
        { timeoutMs: minutes(2), message: "Degraded AuthFailed naming spec.auth.rootSecretRef" },
      );
      await client.patch(EtcdClusterKind, name, ns, {
        spec: { auth: { enabled: true, rootSecretRef: { name: rootSecretName(etcdCluster(ns, name)) } } },
      });

      await client.patch(EtcdClusterKind, name, ns, { spec: { replicas: 4 } });
      await waitAvailable(client, ns, name, 4, minutes(4));
      const after = new EtcdClient({
        endpoints: await readyEndpoints(client, ns, name),
        timeoutMs: 10_000,
        auth: { username: "root", password },
      });
      const { members } = await after.memberList({ linearizable: true });
      expect(members.filter((m) => !m.isLearner)).toHaveLength(4);
      expect(await after.get("/auth/key")).toBe("value");
      expect(condition(await client.get(EtcdClusterKind, name, ns), "Degraded")?.status).toBe("False");
    },
    minutes(10),
  );
});
