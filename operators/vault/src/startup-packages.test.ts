// What the operator process loads when it starts: not the code it may never run. @kubernetes/client-node (a
// kubeconfig with an exec plugin or auth provider), pkijs (certificates made) and the AWS SDK (@capstan/backup's
// Job steps, run by snapshot and restore Jobs, never by the operator) are imported on first use, and the operator
// bundle keeps them in chunks of their own (docs/performance.md, "Footprint").
import { fileURLToPath } from "node:url";
import { startupPackages } from "@capstan/testing";
import { describe, expect, it } from "vitest";

const main = fileURLToPath(new URL("./main.ts", import.meta.url));

describe("the operator's start", () => {
  it("loads neither the AWS SDK, nor client-node, nor pkijs", async () => {
    const loaded = await startupPackages(main);
    expect(loaded).toContain("prom-client");
    expect(
      loaded.filter((p) => /^(@aws-sdk\/|@smithy\/|@kubernetes\/client-node$|pkijs$|asn1js$)/.test(p)),
    ).toEqual([]);
  });
});
