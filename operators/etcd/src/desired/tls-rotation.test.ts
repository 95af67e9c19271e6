// The CA rotation planner: a table of states and the one step each leads to, and a walk from start to finish.
import { describe, expect, it } from "vitest";
import {
  planCARotation,
  type RotationInput,
  type RotationMember,
  type RotationStep,
} from "./tls-rotation.ts";

const member = (name: string, trusts: string[], leafIssuer: string, ready = true): RotationMember => ({
  name,
  ready,
  trusts,
  leafIssuer,
});
const three = (trusts: string[], issuer: string) => ["a", "b", "c"].map((n) => member(n, trusts, issuer));

describe("planCARotation", () => {
  it.each<[string, RotationInput, RotationStep["type"], string?]>([
    [
      "steady, nothing asked",
      {
        requested: false,
        signingCA: "old",
        bundle: ["old"],
        clientIssuers: ["old"],
        members: three(["old"], "old"),
      },
      "None",
    ],
    [
      "asked: a new CA first",
      {
        requested: true,
        signingCA: "old",
        bundle: ["old"],
        clientIssuers: ["old"],
        members: three(["old"], "old"),
      },
      "CreateNextCA",
    ],
    [
      "bundle grew: restart the first stale member",
      {
        requested: true,
        signingCA: "old",
        bundle: ["old", "new"],
        nextCA: "new",
        clientIssuers: ["old"],
        members: three(["old"], "old"),
      },
      "RestartMember",
      "a",
    ],
    [
      "one restarted: the next one",
      {
        requested: true,
        signingCA: "old",
        bundle: ["old", "new"],
        nextCA: "new",
        clientIssuers: ["old"],
        members: [
          member("a", ["old", "new"], "old"),
          member("b", ["old"], "old"),
          member("c", ["old"], "old"),
        ],
      },
      "RestartMember",
      "b",
    ],
    [
      "a member not ready: no restart",
      {
        requested: true,
        signingCA: "old",
        bundle: ["old", "new"],
        nextCA: "new",
        clientIssuers: ["old"],
        members: [
          member("a", ["old", "new"], "old", false),
          member("b", ["old"], "old"),
          member("c", ["old"], "old"),
        ],
      },
      "Wait",
    ],
    [
      "all trust both: the new CA signs",
      {
        requested: true,
        signingCA: "old",
        bundle: ["old", "new"],
        nextCA: "new",
        clientIssuers: ["old"],
        members: three(["old", "new"], "old"),
      },
      "SwitchSigningCA",
    ],
    [
      "leaves of the old CA are reissued",
      {
        requested: true,
        signingCA: "new",
        bundle: ["new", "old"],
        nextCA: "new",
        clientIssuers: ["new"],
        members: [
          member("a", ["old", "new"], "new"),
          member("b", ["old", "new"], "old"),
          member("c", ["old", "new"], "new"),
        ],
      },
      "ReissueLeaf",
      "b",
    ],
    [
      "a client certificate still of the old CA",
      {
        requested: true,
        signingCA: "new",
        bundle: ["old", "new"],
        nextCA: "new",
        clientIssuers: ["new", "old"],
        members: three(["old", "new"], "new"),
      },
      "Wait",
    ],
    [
      "every leaf new: the old CA leaves the bundle",
      {
        requested: true,
        signingCA: "new",
        bundle: ["old", "new"],
        nextCA: "new",
        clientIssuers: ["new"],
        members: three(["old", "new"], "new"),
      },
      "DropOldCA",
    ],
    [
      "bundle shrank: members restarted again, one at a time",
      {
        requested: false,
        signingCA: "new",
        bundle: ["new"],
        clientIssuers: ["new"],
        members: three(["old", "new"], "new"),
      },
      "RestartMember",
      "a",
    ],
  ])("%s", (_name, input, type, name) => {
    const step = planCARotation(input);
    expect(step.type).toBe(type);
    if (name !== undefined) expect("name" in step ? step.name : undefined).toBe(name);
  });

  it("walks a 3-member cluster from one CA to the next, never restarting two members at once", () => {
    // A tiny simulation: each step is applied; restarts make the member trust the bundle it reads at start.
    const state = {
      requested: true,
      signingCA: "old",
      bundle: ["old"] as string[],
      nextCA: undefined as string | undefined,
      clientIssuers: ["old"],
      members: three(["old"], "old"),
    };
    const taken: string[] = [];
    for (let i = 0; i < 30; i++) {
      const { nextCA, ...rest } = state;
      const step = planCARotation({ ...rest, ...(nextCA === undefined ? {} : { nextCA }) });
      if (step.type === "None") break;
      taken.push(
        step.type === "RestartMember" || step.type === "ReissueLeaf"
          ? `${step.type} ${step.name}`
          : step.type,
      );
      switch (step.type) {
        case "CreateNextCA":
          state.nextCA = "new";
          state.bundle = ["old", "new"];
          break;
        case "RestartMember":
          state.members = state.members.map((m) =>
            m.name === step.name ? { ...m, trusts: [...state.bundle] } : m,
          );
          break;
        case "SwitchSigningCA":
          state.signingCA = "new";
          state.clientIssuers = ["new"];
          break;
        case "ReissueLeaf":
          state.members = state.members.map((m) => (m.name === step.name ? { ...m, leafIssuer: "new" } : m));
          break;
        case "DropOldCA":
          state.bundle = ["new"];
          state.nextCA = undefined;
          state.requested = false;
          break;
        case "Wait":
          throw new Error(step.message);
      }
    }
    expect(taken).toEqual([
      "CreateNextCA",
      "RestartMember a",
      "RestartMember b",
      "RestartMember c",
      "SwitchSigningCA",
      "ReissueLeaf a",
      "ReissueLeaf b",
      "ReissueLeaf c",
      "DropOldCA",
      "RestartMember a",
      "RestartMember b",
      "RestartMember c",
    ]);
  });
});
