// Rewrites the generated EtcdCluster reference in docs/operators/etcd.md from the schema (run: npm run gen:docs).
import { readFileSync, writeFileSync } from "node:fs";
import { renderCrdReference, spliceGeneratedBlock } from "../src/api/crd-reference.ts";
import { etcdClusterCrd } from "../src/api/etcd-cluster.ts";

const page = new URL("../../../docs/operators/etcd.md", import.meta.url);
const before = readFileSync(page, "utf8");
const after = spliceGeneratedBlock(before, renderCrdReference(etcdClusterCrd()));
if (after === before) {
  console.log("docs/operators/etcd.md is up to date");
} else {
  writeFileSync(page, after);
  console.log("wrote the EtcdCluster reference in docs/operators/etcd.md");
}
