// The operator's own token (rule 8 of the planner): made with the root token while it is kept, else with a root
// token generated from the unseal keys; the initial root token revoked unless spec keeps it; the periodic token
// renewed before it lapses. Pure.
import type { VaultClusterSpec } from "../api/vault-cluster.ts";
import type { ObservedKeys, ObservedToken, Step } from "./types.ts";

/**
 * Rule 8: the operator token missing or refused, with the root token at hand -> BootstrapToken; without it ->
 * RegenerateRootToken (sys/generate-root with the unseal keys, then BootstrapToken); root token kept against spec
 * -> RevokeRootToken; less than half its period left -> RenewToken; else undefined.
 */
export function planToken(
  spec: VaultClusterSpec,
  keys: ObservedKeys,
  token: ObservedToken | undefined,
  active: string,
): Step | undefined {
  const usable = keys.operatorToken && token?.valid !== false;
  if (!usable) {
    if (keys.rootToken) {
      return {
        type: "BootstrapToken",
        pod: active,
        message: "writing the operator's policy and creating its periodic token with the root token",
      };
    }
    const why = keys.operatorToken
      ? `Vault refuses it: ${token?.valid === false ? token.error : ""}`
      : "it is missing";
    return {
      type: "RegenerateRootToken",
      pod: active,
      message: `the operator token in the keys Secret is unusable (${why}) and no root token is kept: generating a root token with the unseal keys, to make a new operator token and revoke it`,
    };
  }
  if (keys.rootToken && !spec.unseal.keepRootToken) {
    return {
      type: "RevokeRootToken",
      pod: active,
      message: "revoking the initial root token (spec.unseal.keepRootToken is false)",
    };
  }
  if (token?.valid === true && token.periodSeconds > 0 && token.ttlSeconds < token.periodSeconds / 2) {
    return {
      type: "RenewToken",
      pod: active,
      message: `renewing the operator token (${token.ttlSeconds}s of its ${token.periodSeconds}s period left)`,
    };
  }
  return undefined;
}
