// The operator command line: controller-runtime's flag names, environment fallbacks, Go-style booleans, errors
// that name the flag, and operator-specific flags.
import { describe, expect, expectTypeOf, it } from "vitest";
import { type CommandLine, CommandLineError, commandLineUsage, parseCommandLine } from "./command-line.ts";

const parse = (args: string[], env: Record<string, string> = {}) => {
  const r = parseCommandLine({ name: "demo-operator", args, env });
  if (r === "help") throw new Error("unexpected help");
  return r;
};

describe("parseCommandLine", () => {
  it("defaults: metrics on :8080 over HTTPS, probes on :8081, no leader election, every namespace", () => {
    const cli = parse([]);
    expect(cli.manager).toEqual({
      name: "demo-operator",
      metricsPort: 8080,
      healthPort: 8081,
      bindAddress: "0.0.0.0",
      metricsServer: { secure: true },
    });
    expect(cli).toMatchObject({ watchNamespace: undefined, leaderElect: false, maxConcurrentReconciles: 4 });
    expect(cli.logLevel).toBe("info");
  });

  it("takes controller-runtime's flags, Go-style booleans included", () => {
    const cli = parse(
      [
        "--metrics-bind-address=127.0.0.1:9090",
        "--health-probe-bind-address",
        "127.0.0.1:9091",
        "--leader-elect=true",
        "--leader-election-id=my-lease",
        "--leader-election-namespace",
        "ops",
        "--watch-namespace=team-a",
        "--metrics-secure=false",
        "--metrics-cert-dir=/certs",
        "--max-concurrent-reconciles=2",
        "--log-level=debug",
      ],
      { POD_NAME: "op-0" },
    );
    expect(cli.manager).toEqual({
      name: "demo-operator",
      namespace: "team-a",
      leaderElection: { namespace: "ops", name: "my-lease", identity: "op-0" },
      metricsPort: 9090,
      healthPort: 9091,
      bindAddress: "127.0.0.1",
      metricsServer: { secure: false, certDir: "/certs" },
    });
    expect(cli.maxConcurrentReconciles).toBe(2);
    expect(cli.logLevel).toBe("debug");
    expect(parse(["--leader-elect"]).leaderElect).toBe(true);
    expect(parse(["--no-metrics-secure"]).metricsSecure).toBe(false);
  });

  it("falls back to the environment the charts set, and a flag wins over its variable", () => {
    const env = {
      WATCH_NAMESPACE: "team-b",
      LEADER_ELECT: "true",
      LEADER_ELECTION_NAME: "rel-leader",
      POD_NAMESPACE: "op-ns",
      METRICS_SECURE: "false",
      LOG_LEVEL: "warn",
      MAX_CONCURRENT_RECONCILES: "8",
    };
    const cli = parse([], env);
    expect(cli.manager.namespace).toBe("team-b");
    expect(cli.manager.leaderElection).toEqual({ namespace: "op-ns", name: "rel-leader" });
    expect(cli.metricsSecure).toBe(false);
    expect(cli.logLevel).toBe("warn");
    expect(cli.maxConcurrentReconciles).toBe(8);
    const flagWins = parse(["--watch-namespace=team-c", "--leader-elect=false", "--log-level=error"], env);
    expect(flagWins.manager.namespace).toBe("team-c");
    expect(flagWins.manager.leaderElection).toBeUndefined();
    expect(flagWins.logLevel).toBe("error");
  });

  it("the Lease defaults to capstan-<name>-leader in the watch namespace; empty variables count as unset", () => {
    const cli = parse(["--leader-elect"], { WATCH_NAMESPACE: "team-a", POD_NAMESPACE: " " });
    expect(cli.manager.leaderElection).toEqual({ namespace: "team-a", name: "capstan-demo-operator-leader" });
  });

  it('"0" disables a server; ":0" picks a free port', () => {
    const cli = parse(["--metrics-bind-address=0", "--health-probe-bind-address=:0"]);
    expect(cli.manager.metricsPort).toBeNull();
    expect(cli.manager.healthPort).toBe(0);
  });

  it.each<[string[], Record<string, string>, RegExp]>([
    [["--metrics-bind-address=8080"], {}, /--metrics-bind-address: "8080" is not an address like ":8080"/],
    [["--leader-elect=yes"], {}, /--leader-elect: "yes" is not true or false/],
    [[], { METRICS_SECURE: "maybe" }, /METRICS_SECURE: "maybe" is not true or false/],
    [
      ["--max-concurrent-reconciles=0"],
      {},
      /--max-concurrent-reconciles: "0" is not a whole number of at least 1/,
    ],
    [["--log-level=loud"], {}, /--log-level: "loud" is not one of trace, debug/],
    [["--metrics-bind-adress=:1"], {}, /Unknown option '--metrics-bind-adress'.*see --help/],
    [["extra"], {}, /positional argument.*see --help/],
    [
      ["--metrics-bind-address=127.0.0.1:1", "--health-probe-bind-address=10.0.0.1:2"],
      {},
      /must listen on the same host \(127\.0\.0\.1 and 10\.0\.0\.1\)/,
    ],
  ])("refuses %j %j naming the flag", (args, env, message) => {
    expect(() => parse(args, env)).toThrow(CommandLineError);
    expect(() => parse(args, env)).toThrow(message);
  });

  it("takes the operator's own flags, with their variables and defaults", () => {
    const extra = {
      "reloader-image": { type: "string", env: "RELOADER_IMAGE", default: "busybox:1", description: "image" },
      "dry-run": { type: "boolean", description: "plan only" },
    } as const;
    const run = (args: string[], env: Record<string, string> = {}) =>
      parseCommandLine({ name: "x", args, env, extra }) as CommandLine<typeof extra>;
    expect(run([]).extra).toEqual({ "reloader-image": "busybox:1", "dry-run": false });
    expect(run([], { RELOADER_IMAGE: "r:2" }).extra["reloader-image"]).toBe("r:2");
    // Types: a string flag with a default is a string, without one possibly undefined; a boolean a boolean.
    expectTypeOf(run([]).extra["reloader-image"]).toEqualTypeOf<string>();
    expectTypeOf(run([]).extra["dry-run"]).toEqualTypeOf<boolean>();
    const bare = { image: { type: "string", description: "image" } } as const;
    expectTypeOf<CommandLine<typeof bare>["extra"]["image"]>().toEqualTypeOf<string | undefined>();
    expect(run(["--reloader-image=r:3", "--dry-run=true"], { RELOADER_IMAGE: "r:2" }).extra).toEqual({
      "reloader-image": "r:3",
      "dry-run": true,
    });
    expect(() =>
      parseCommandLine({ name: "x", args: [], extra: { "leader-elect": extra["dry-run"] } }),
    ).toThrow(/--leader-elect is a common flag/);
  });

  it("--help asks for the usage, which lists every flag with its variable", () => {
    expect(parseCommandLine({ name: "demo-operator", args: ["--help"], env: {} })).toBe("help");
    const usage = commandLineUsage({
      name: "demo-operator",
      extra: { "reloader-image": { type: "string", env: "RELOADER_IMAGE", description: "sidecar image" } },
    });
    expect(usage).toContain("usage: demo-operator [flags]");
    expect(usage).toMatch(
      /--metrics-bind-address <value> +address of \/metrics.*\[env METRICS_BIND_ADDRESS\]/,
    );
    expect(usage).toMatch(/--leader-elect\[=true\|false\] +run several replicas.*\[env LEADER_ELECT\]/);
    expect(usage).toMatch(/--reloader-image <value> +sidecar image \[env RELOADER_IMAGE\]/);
  });
});
