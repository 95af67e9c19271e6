import { describe, expect, it } from "vitest";
import { fence } from "./fence.ts";

describe("fence", () => {
  it("lets the step go ahead when no other pod exists", () => {
    expect(fence([], "forking")).toBeUndefined();
  });

  it("waits, naming each pod still present in name order, since when it terminates and on which node", () => {
    const wait = fence(
      [{ name: "v-2", terminatingSince: new Date("2026-12-04T19:55:00Z"), node: "node-2" }, { name: "v-1" }],
      "restarting v-0 on peers.json",
      { operand: "Vault", server: "server" },
    );
    expect(wait).toMatchObject({ type: "Wait", reason: "WaitingForFence", pods: ["v-1", "v-2"] });
    expect(wait?.message).toBe(
      "fenced: not restarting v-0 on peers.json while another server's pod exists; pod v-1 still exists: Vault may still be running behind a partition; it is gone once the node lifecycle or a human force-deletes it (kubectl delete pod v-1 --force --grace-period=0) after confirming the node is down; pod v-2 is Terminating since 2026-12-04T19:55:00.000Z on node node-2: Vault may still be running behind a partition; it is gone once the node lifecycle or a human force-deletes it (kubectl delete pod v-2 --force --grace-period=0) after confirming the node is down",
    );
  });

  it("names etcd members by default (the etcd operator's wording)", () => {
    expect(fence([{ name: "e-b" }], "forcing")?.message).toContain(
      "while another member's pod exists; pod e-b still exists: etcd may still be running",
    );
  });
});
