// An operator's command line: the flags every Capstan operator takes, named as controller-runtime's operators
// name them (--metrics-bind-address, --health-probe-bind-address, --leader-elect, ...), each with an environment
// variable as fallback (what the Helm charts set), plus the operator's own flags. Parsed with node:util parseArgs;
// `--help` prints the usage. The result feeds ManagerOptions directly.
import { parseArgs } from "node:util";
import type { ManagerOptions } from "./manager.ts";

/** One operator-specific flag: `--<name>`, its environment fallback and default. */
export interface ExtraFlag {
  type: "string" | "boolean";
  /** Environment variable read when the flag is not given. */
  env?: string;
  default?: string | boolean;
  /** One line for --help. */
  description: string;
}

export interface CommandLineSpec<E extends Record<string, ExtraFlag> = Record<string, ExtraFlag>> {
  /** The operator's name, e.g. "etcd-operator": the default Lease is `capstan-<name>-leader`. */
  name: string;
  /** One line for --help. */
  description?: string;
  /** Default process.argv.slice(2). */
  args?: string[];
  /** Default process.env. */
  env?: Record<string, string | undefined>;
  /** The operator's own flags. */
  extra?: E;
}

/** What the command line says: ManagerOptions to spread, and the values controllers and the logger need. */
export interface CommandLine<E extends Record<string, ExtraFlag> = Record<string, ExtraFlag>> {
  manager: Pick<
    ManagerOptions,
    "name" | "namespace" | "leaderElection" | "metricsPort" | "healthPort" | "bindAddress" | "metricsServer"
  >;
  /** --watch-namespace: undefined means every namespace. */
  watchNamespace: string | undefined;
  leaderElect: boolean;
  metricsSecure: boolean;
  maxConcurrentReconciles: number;
  logLevel: string;
  /** Each extra flag's value: a boolean flag is a boolean; a string flag with a default is always a string. */
  extra: {
    [K in keyof E]: E[K]["type"] extends "boolean"
      ? boolean
      : E[K] extends { default: string }
        ? string
        : string | undefined;
  };
}

/** A flag or environment value that cannot be used; the message names it. */
export class CommandLineError extends Error {
  override name = "CommandLineError";
}

interface CommonFlag {
  type: "string" | "boolean";
  env: string[];
  description: string;
}

const COMMON: Record<string, CommonFlag> = {
  "metrics-bind-address": {
    type: "string",
    env: ["METRICS_BIND_ADDRESS"],
    description: 'address of /metrics, e.g. ":8080" or "127.0.0.1:8080"; "0" disables it (default ":8080")',
  },
  "health-probe-bind-address": {
    type: "string",
    env: ["HEALTH_PROBE_BIND_ADDRESS"],
    description: 'address of /healthz and /readyz (plain HTTP); "0" disables them (default ":8081")',
  },
  "metrics-secure": {
    type: "boolean",
    env: ["METRICS_SECURE"],
    description:
      "serve /metrics over HTTPS, only to callers the API server authenticates and authorizes (default true)",
  },
  "metrics-cert-dir": {
    type: "string",
    env: ["METRICS_CERT_DIR"],
    description:
      "directory with tls.crt and tls.key for /metrics (re-read when rotated); default self-signed",
  },
  "leader-elect": {
    type: "boolean",
    env: ["LEADER_ELECT"],
    description: "run several replicas with one active leader, elected through a Lease (default false)",
  },
  "leader-election-id": {
    type: "string",
    env: ["LEADER_ELECTION_ID", "LEADER_ELECTION_NAME"],
    description: "name of the Lease (default capstan-<operator>-leader)",
  },
  "leader-election-namespace": {
    type: "string",
    env: ["LEADER_ELECTION_NAMESPACE", "POD_NAMESPACE"],
    description: "namespace of the Lease (default the watch namespace, else default)",
  },
  "watch-namespace": {
    type: "string",
    env: ["WATCH_NAMESPACE"],
    description: "reconcile only in this namespace (the namespace-scoped mode); default every namespace",
  },
  "max-concurrent-reconciles": {
    type: "string",
    env: ["MAX_CONCURRENT_RECONCILES"],
    description: "reconciles run at once per controller (default 4)",
  },
  "log-level": {
    type: "string",
    env: ["LOG_LEVEL"],
    description: "trace, debug, info, warn, error or fatal (default info)",
  },
};

const LOG_LEVELS = ["trace", "debug", "info", "warn", "error", "fatal", "silent"];

/** The --help text of an operator's command line. */
export function commandLineUsage(spec: CommandLineSpec): string {
  const rows: [string, string][] = [];
  const all: [string, { type: string; env: string[]; description: string }][] = [
    ...Object.entries(COMMON),
    ...Object.entries(spec.extra ?? {}).map(
      ([name, f]) =>
        [name, { type: f.type, env: f.env === undefined ? [] : [f.env], description: f.description }] as [
          string,
          { type: string; env: string[]; description: string },
        ],
    ),
  ];
  for (const [name, f] of all) {
    const flag = f.type === "boolean" ? `--${name}[=true|false]` : `--${name} <value>`;
    const env = f.env.length === 0 ? "" : ` [env ${f.env.join(", ")}]`;
    rows.push([flag, `${f.description}${env}`]);
  }
  rows.push(["--help", "print this help"]);
  const width = Math.max(...rows.map(([f]) => f.length));
  return [
    `usage: ${spec.name} [flags]`,
    ...(spec.description === undefined ? [] : [spec.description]),
    "",
    "Flags (a flag wins over its environment variable):",
    ...rows.map(([f, d]) => `  ${f.padEnd(width)}  ${d}`),
    "",
  ].join("\n");
}

/**
 * Parses an operator's command line. Returns `"help"` when --help was asked; throws a `CommandLineError`
 * naming the flag (or variable) when a value cannot be used.
 */
export function parseCommandLine<E extends Record<string, ExtraFlag>>(
  spec: CommandLineSpec<E>,
): CommandLine<E> | "help" {
  const env = spec.env ?? process.env;
  const extra: Record<string, ExtraFlag> = spec.extra ?? {};
  for (const name of Object.keys(extra)) {
    if (name in COMMON || name === "help") throw new CommandLineError(`--${name} is a common flag`);
  }
  const booleans = new Set(
    [...Object.entries(COMMON), ...Object.entries(extra)]
      .filter(([, f]) => f.type === "boolean")
      .map(([n]) => n),
  );
  const options: Record<string, { type: "string" | "boolean" }> = { help: { type: "boolean" } };
  for (const [name, f] of [...Object.entries(COMMON), ...Object.entries(extra)])
    options[name] = { type: f.type };

  // Go's flag package (and so every controller-runtime manifest) writes booleans as --flag=false.
  const args = (spec.args ?? process.argv.slice(2)).map((arg) => {
    const m = /^--([a-z0-9-]+)=(.*)$/.exec(arg);
    if (m === null || !booleans.has(m[1] ?? "")) return arg;
    const value = parseBoolean(m[2] ?? "", `--${m[1]}`);
    return value ? `--${m[1]}` : `--no-${m[1]}`;
  });
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({ args, options, strict: true, allowPositionals: false, allowNegative: true }));
  } catch (err) {
    throw new CommandLineError(`${(err as Error).message} (see --help)`);
  }
  if (values.help === true) return "help";

  /** The flag's value, else the first environment variable set (trimmed, empty counts as unset). */
  const raw = (name: string, envNames: string[]): string | boolean | undefined => {
    if (values[name] !== undefined) return values[name];
    for (const e of envNames) {
      const v = env[e]?.trim();
      if (v !== undefined && v !== "") return v;
    }
    return undefined;
  };
  const from = (name: string) => {
    const envNames = COMMON[name]?.env ?? [];
    return {
      value: raw(name, envNames),
      source: values[name] !== undefined ? `--${name}` : envNames.join("/"),
    };
  };
  const bool = (name: string, fallback: boolean): boolean => {
    const { value, source } = from(name);
    if (value === undefined) return fallback;
    return typeof value === "boolean" ? value : parseBoolean(value, source);
  };
  const str = (name: string): string | undefined => {
    const v = from(name).value;
    return typeof v === "string" ? v : undefined;
  };

  const metrics = parseBindAddress(
    str("metrics-bind-address") ?? ":8080",
    from("metrics-bind-address").source,
  );
  const health = parseBindAddress(
    str("health-probe-bind-address") ?? ":8081",
    from("health-probe-bind-address").source,
  );
  const hosts = [metrics, health].filter((a) => a !== null).map((a) => a.host);
  if (hosts.length === 2 && hosts[0] !== hosts[1]) {
    throw new CommandLineError(
      `--metrics-bind-address and --health-probe-bind-address must listen on the same host (${hosts[0]} and ${hosts[1]})`,
    );
  }
  const watchNamespace = str("watch-namespace");
  const leaderElect = bool("leader-elect", false);
  const metricsSecure = bool("metrics-secure", true);
  const certDir = str("metrics-cert-dir");
  const logLevel = str("log-level") ?? "info";
  if (!LOG_LEVELS.includes(logLevel)) {
    throw new CommandLineError(
      `${from("log-level").source}: "${logLevel}" is not one of ${LOG_LEVELS.join(", ")}`,
    );
  }
  const concurrencyText = str("max-concurrent-reconciles") ?? "4";
  const maxConcurrentReconciles = Number(concurrencyText);
  if (!Number.isInteger(maxConcurrentReconciles) || maxConcurrentReconciles < 1) {
    throw new CommandLineError(
      `${from("max-concurrent-reconciles").source}: "${concurrencyText}" is not a whole number of at least 1`,
    );
  }

  const identity = env.POD_NAME?.trim();
  const manager: CommandLine<E>["manager"] = {
    name: spec.name,
    ...(watchNamespace === undefined ? {} : { namespace: watchNamespace }),
    ...(leaderElect
      ? {
          leaderElection: {
            namespace: str("leader-election-namespace") ?? watchNamespace ?? "default",
            name: str("leader-election-id") ?? `capstan-${spec.name}-leader`,
            ...(identity ? { identity } : {}),
          },
        }
      : {}),
    metricsPort: metrics === null ? null : metrics.port,
    healthPort: health === null ? null : health.port,
    ...(hosts[0] === undefined ? {} : { bindAddress: hosts[0] }),
    metricsServer: { secure: metricsSecure, ...(certDir === undefined ? {} : { certDir }) },
  };

  const extraValues: Record<string, string | boolean | undefined> = {};
  for (const [name, f] of Object.entries(extra)) {
    const value = raw(name, f.env === undefined ? [] : [f.env]);
    const source = values[name] !== undefined ? `--${name}` : (f.env ?? `--${name}`);
    if (f.type === "boolean") {
      extraValues[name] =
        value === undefined
          ? f.default === true
          : typeof value === "boolean"
            ? value
            : parseBoolean(value, source);
    } else {
      extraValues[name] = typeof value === "string" ? value : (f.default as string | undefined);
    }
  }
  return {
    manager,
    watchNamespace,
    leaderElect,
    metricsSecure,
    maxConcurrentReconciles,
    logLevel,
    extra: extraValues as CommandLine<E>["extra"],
  };
}

/**
 * {@link parseCommandLine} for a process's main: prints the usage and exits 0 on --help, prints the error and
 * exits 2 on a bad flag.
 */
export function operatorCommandLine<E extends Record<string, ExtraFlag>>(
  spec: CommandLineSpec<E>,
): CommandLine<E> {
  try {
    const parsed = parseCommandLine(spec);
    if (parsed !== "help") return parsed;
    process.stdout.write(commandLineUsage(spec));
    process.exit(0);
  } catch (err) {
    if (!(err instanceof CommandLineError)) throw err;
    process.stderr.write(`${spec.name}: ${err.message}\n`);
    process.exit(2);
  }
}

function parseBoolean(value: string, source: string): boolean {
  if (/^(true|1)$/i.test(value)) return true;
  if (/^(false|0)$/i.test(value)) return false;
  throw new CommandLineError(`${source}: "${value}" is not true or false`);
}

/** ":8080" / "host:8080" / "[::1]:8080" -> host and port; "0" -> null (disabled). */
function parseBindAddress(value: string, source: string): { host: string; port: number } | null {
  if (value === "0") return null;
  const m = /^(?:\[([^\]]+)\]|([^:]*)):(\d+)$/.exec(value);
  const port = Number(m?.[3]);
  if (m === null || !Number.isInteger(port) || port > 65535) {
    throw new CommandLineError(
      `${source}: "${value}" is not an address like ":8080" or "127.0.0.1:8080" (or "0")`,
    );
  }
  return { host: m[1] ?? (m[2] || "0.0.0.0"), port };
}
