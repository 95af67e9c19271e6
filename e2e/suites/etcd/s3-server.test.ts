// The S3 server the etcd backup suites upload to (fixtures/s3.ts: versitygw on the real node) is a real one with
// authentication on: objects put through the S3 API list, read back byte for byte and delete; requests without
// a signature, or signed with a wrong secret, are refused; pods reach it at its in-cluster URL with the
// credentials from its Secret.
import { ListObjectsV2Command } from "@aws-sdk/client-s3";
import { type Client, Pod, Secret } from "@capstan/core";
import { connect, createNamespace, type TestNamespace, waitFor } from "@capstan/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { etcdSuitesEnabled, nodeName } from "./fixtures/operator-release.ts";
import { deployS3Server, type S3Server, s3Client } from "./fixtures/s3.ts";

let client: Client;
let ns: TestNamespace;
let server: S3Server;

describe.skipIf(!etcdSuitesEnabled)("the S3 server of the backup suites", () => {
  beforeAll(async () => {
    ({ client } = connect());
    ns = await createNamespace(client, "etcd-s3");
    server = await deployS3Server(client, ns.name);
  }, 240_000);
  afterAll(async () => {
    await server?.teardown();
    await ns?.cleanup();
    await client?.close();
  });

  it("puts, lists, gets and deletes objects", async () => {
    const big = Buffer.alloc(3 * 1024 * 1024 + 17);
    for (let i = 0; i < big.length; i++) big[i] = (i * 31 + 7) % 251;
    await server.putObject("a/one.db", "first");
    await server.putObject("a/two.db", big);
    await server.putObject("b/other.db", "elsewhere");

    const listed = await server.listObjects("a/");
    expect(listed.map((o) => [o.key, o.size])).toEqual([
      ["a/one.db", 5],
      ["a/two.db", big.length],
    ]);
    expect((await server.getObject("a/one.db")).toString()).toBe("first");
    expect((await server.getObject("a/two.db")).equals(big)).toBe(true);

    await server.deleteObject("a/one.db");
    expect((await server.listObjects("a/")).map((o) => o.key)).toEqual(["a/two.db"]);
    await expect(server.getObject("a/one.db")).rejects.toMatchObject({ name: "NoSuchKey" });
    expect((await server.listObjects()).map((o) => o.key)).toEqual(["a/two.db", "b/other.db"]);
  });

  it("refuses unauthenticated and wrongly signed requests", async () => {
    await server.putObject("secret.txt", "not for anyone");
    const url = `${server.hostEndpoint}/${server.bucket}`;
    const get = await fetch(`${url}/secret.txt`, { signal: AbortSignal.timeout(10_000) });
    expect(get.status, await get.text()).toBe(403);
    const list = await fetch(`${url}?list-type=2`, { signal: AbortSignal.timeout(10_000) });
    expect(list.status, await list.text()).toBe(403);
    const put = await fetch(`${url}/planted.txt`, {
      method: "PUT",
      body: "x",
      signal: AbortSignal.timeout(10_000),
    });
    expect(put.status, await put.text()).toBe(403);

    const wrong = s3Client(server.hostEndpoint, server.region, {
      accessKeyId: server.accessKeyId,
      secretAccessKey: `${server.secretAccessKey}x`,
    });
    try {
      await expect(wrong.send(new ListObjectsV2Command({ Bucket: server.bucket }))).rejects.toMatchObject({
        $metadata: { httpStatusCode: 403 },
      });
    } finally {
      wrong.destroy();
    }
    expect((await server.listObjects()).map((o) => o.key)).not.toContain("planted.txt");
  });

  it("holds the credentials in a Secret under the keys EtcdBackup reads", async () => {
    const secret = await client.get(Secret, server.credentials.secretName, ns.name);
    const value = (key: string) => Buffer.from(secret.data?.[key] ?? "", "base64").toString();
    expect(value(server.credentials.accessKeyIDKey)).toBe(server.accessKeyId);
    expect(value(server.credentials.secretAccessKeyKey)).toBe(server.secretAccessKey);
    expect(server.endpoint).toBe(`http://s3.${ns.name}.svc:7070`);
  });

  it("answers pods at its in-cluster URL", async () => {
    // busybox's wget through the Service name (CoreDNS): an unsigned request, so S3's 403 proves it got there
    // (busybox's wget prints neither the error body nor the headers of a refused request).
    await client.create(Pod, {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "probe", namespace: ns.name },
      spec: {
        nodeSelector: { "kubernetes.io/hostname": nodeName },
        restartPolicy: "Never",
        containers: [
          {
            name: "probe",
            image: process.env.CAPSTAN_BUSYBOX_IMAGE ?? "capstan.local/busybox:1",
            imagePullPolicy: "IfNotPresent",
            command: ["sh", "-c", `wget -S -O- ${server.endpoint}/${server.bucket} 2>&1; true`],
          },
        ],
      },
    });
    await waitFor(
      "the probe pod to finish",
      async () => {
        const p = await client.get(Pod, "probe", ns.name);
        return p.status?.phase === "Succeeded" || p.status?.phase === "Failed" ? p : undefined;
      },
      120_000,
      1_000,
    );
    const log = String(await client.raw(`/api/v1/namespaces/${ns.name}/pods/probe/log`));
    expect(log).toContain(`Connecting to s3.${ns.name}.svc:7070`);
    expect(log).toMatch(/server returned error: HTTP\/1.1 403 Forbidden/);
  });
});
