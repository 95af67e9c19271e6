// Writes crds/*.yaml from the schema in src/api (run: npm run gen:crd -w @capstan/etcd-operator).
import { writeFileSync } from "node:fs";
import { renderCrds } from "../src/api/crd-yaml.ts";

const dir = new URL("../crds/", import.meta.url);
for (const { file, yaml } of renderCrds()) {
  writeFileSync(new URL(file, dir), yaml);
  console.log(`wrote crds/${file}`);
}
