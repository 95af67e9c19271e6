// The public API as the BUILT package exports it: the runtime names of dist/index.js (and of the test kit,
// dist/testing/index.js) against the lists below, so an export added by accident fails here. A new export is a
// decision: add it to the list, with a TSDoc comment (checked below) and a line in docs/core.md. At most 100 runtime
// names in the main entry (issue 26): what an operator author uses; core's own tests reach the rest by src path.
// Run after a build (`npm run build --workspace @capstan/core`; turbo's test task builds core first).
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

/** The runtime names of `@capstan/core`, by the module that defines them. */
const CORE: Record<string, readonly string[]> = {
  "api/kinds.ts": [
    "ConfigMap",
    "CronJob",
    "CustomResourceDefinition",
    "Deployment",
    "defineKind",
    "EndpointSlice",
    "Job",
    "KubeEvent",
    "Lease",
    "Namespace",
    "NetworkPolicy",
    "PersistentVolumeClaim",
    "Pod",
    "PodDisruptionBudget",
    "Role",
    "RoleBinding",
    "Secret",
    "Service",
    "ServiceAccount",
    "StatefulSet",
  ],
  "api/crd.ts": ["customResourceDefinition"],
  "api/labels.ts": ["labelSelector"],
  "api/object.ts": ["keyOf"],
  "api/schema.ts": [
    "conditionsSchema",
    "GO_DURATION_PATTERN",
    "goDurationSchema",
    "parseGoDuration",
    "podPlacementProperties",
    "resourcesSchema",
    "STORAGE_SIZE_PATTERN",
    "storageSizeBytes",
    "stringMapSchema",
  ],
  "cache/cache.ts": ["CacheNotSyncedError"],
  "cache/informer-factory.ts": ["InformerFactory"],
  "cache/managed-by.ts": ["MANAGED_BY_LABEL", "managedBySelectors"],
  "client/apply.ts": ["applyIfChanged", "needsApply", "stableHash"],
  "client/client.ts": ["Client"],
  "client/errors.ts": [
    "ApiError",
    "isAlreadyExists",
    "isApiError",
    "isConflict",
    "isInvalid",
    "isNotFound",
    "TerminalError",
  ],
  "client/metadata-only.ts": ["metadataOnly"],
  "client/retry.ts": ["retryOnConflict"],
  "controller/controller.ts": ["Controller", "controller", "owns", "requestFromLabel", "watch"],
  "controller/predicates.ts": ["and", "annotationsChanged", "generationChanged", "labelsChanged", "or"],
  // The TLS kit: make (createCA, issueCertificate), read (certificateInfo, splitPemBundle), check (signedBy,
  // renewalReason).
  "helpers/certificates.ts": [
    "certificateInfo",
    "createCA",
    "issueCertificate",
    "renewalReason",
    "signedBy",
    "splitPemBundle",
  ],
  "helpers/claim-retention.ts": [
    "applyClaimRetention",
    "claimBelongsTo",
    "claimRetentionPatch",
    "claimRetentionSchema",
    "retainedClaim",
  ],
  "helpers/conditions.ts": [
    "conditionsEqual",
    "findCondition",
    "isConditionTrue",
    "removeCondition",
    "setCondition",
  ],
  "helpers/fence.ts": ["fence"],
  "helpers/finalizers.ts": ["addFinalizer", "handleFinalizer", "hasFinalizer", "removeFinalizer"],
  "helpers/owner-references.ts": ["AlreadyOwnedError", "setControllerReference"],
  "helpers/pod-annotations.ts": ["annotatePods"],
  "helpers/pod-spec.ts": [
    "resourceRequirements",
    "restrictedContainerSecurityContext",
    "restrictedPodSecurityContext",
    "spreadOverNodes",
  ],
  "helpers/quorum.ts": ["quorum"],
  "helpers/requests.ts": ["oldestOpenRequest"],
  "helpers/secret-data.ts": ["secretData"],
  "helpers/status-patch.ts": ["statusMergePatch"],
  "helpers/step-conditions.ts": ["stepConditions"],
  "manager/command-line.ts": ["operatorCommandLine", "parseCommandLine"],
  "manager/manager.ts": ["Manager", "shutdownSignal"],
  "metrics/metrics.ts": ["CoreMetrics"],
  "metrics/object-metrics.ts": ["ObjectMetrics"],
  "util/logger.ts": ["createLogger", "silentLogger"],
};

/** The runtime names of `@capstan/core/testing`, the test kit. */
const TESTING: Record<string, readonly string[]> = {
  "testing/as-applied.ts": ["asApplied"],
  "testing/fake-api-server.ts": ["collectionPath", "FakeApiServer", "statusBody", "WRITE_VERBS"],
  "testing/reconcile-once.ts": ["reconcileOnce"],
};

const root = join(dirname(fileURLToPath(import.meta.url)), "..");

async function builtExports(entry: string): Promise<string[]> {
  const file = join(root, "dist", entry);
  if (!existsSync(file)) {
    throw new Error(
      `${file} is missing: build @capstan/core first (npm run build --workspace @capstan/core)`,
    );
  }
  return Object.keys(await import(file)).sort();
}

const names = (byModule: Record<string, readonly string[]>) => Object.values(byModule).flat().sort();

/**
 * The TSDoc comment right above the declaration of `name` in `module` (following `export { name } from` re-exports),
 * or undefined when it has none.
 */
function docComment(module: string, name: string): string | undefined {
  const text = readFileSync(join(root, "src", module), "utf8");
  const escaped = name.replace(/[$]/g, "\\$");
  const declared = new RegExp(
    `(/\\*\\*(?:(?!\\*/)[\\s\\S])*\\*/)?\\s*(?://[^\\n]*\\n\\s*)*export (?:async )?(?:abstract )?(?:function|class|const) ${escaped}\\b`,
  ).exec(text);
  if (declared !== null) return declared[1];
  for (const m of text.matchAll(/export\s*\{([^}]*)\}\s*from\s*"([^"]+)"/g)) {
    if (new RegExp(`\\b${escaped}\\b`).test(m[1] ?? "")) {
      return docComment(join(dirname(module), m[2] ?? ""), name);
    }
  }
  throw new Error(`${name}: no declaration in src/${module}`);
}

describe("the built package's exports", () => {
  it("@capstan/core exports exactly the listed runtime names, at most 100", async () => {
    expect(await builtExports("index.js")).toEqual(names(CORE));
    expect(names(CORE).length).toBeLessThanOrEqual(100);
  });

  it("@capstan/core/testing exports exactly the listed runtime names", async () => {
    expect(await builtExports("testing/index.js")).toEqual(names(TESTING));
  });

  it("package.json exposes only the two entry points", () => {
    const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { exports: object };
    expect(Object.keys(pkg.exports)).toEqual([".", "./testing", "./package.json"]);
  });

  it("every exported runtime name has a TSDoc comment (what TypeDoc shows)", () => {
    const undocumented = Object.entries({ ...CORE, ...TESTING }).flatMap(([module, list]) =>
      list.filter((name) => docComment(module, name) === undefined).map((name) => `${module}: ${name}`),
    );
    expect(undocumented).toEqual([]);
  });
});
