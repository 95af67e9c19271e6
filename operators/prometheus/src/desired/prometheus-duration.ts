// Prometheus durations ("30s", "1h30m", "15d") as Prometheus itself reads them: model.ParseDuration of
// prometheus/common, which every 3.x release loads its configuration and flags with. Pure.
const DURATION_UNITS: [string, number][] = [
  ["y", 365 * 24 * 3600 * 1000],
  ["w", 7 * 24 * 3600 * 1000],
  ["d", 24 * 3600 * 1000],
  ["h", 3600 * 1000],
  ["m", 60 * 1000],
  ["s", 1000],
  ["ms", 1],
];
const DURATION = /^(?:(\d+)y)?(?:(\d+)w)?(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?(?:(\d+)ms)?$/;

/**
 * The longest duration Prometheus reads, in milliseconds: a Go time.Duration holds at most 2^63-1 nanoseconds (about
 * 292 years); model.ParseDuration refuses more as "duration out of range".
 */
export const MAX_PROMETHEUS_DURATION_MS = Number((2n ** 63n - 1n) / 1_000_000n);

/**
 * Milliseconds of a Prometheus duration ("30s", "1h30m", "15d", "0"), or undefined if Prometheus would refuse it:
 * units y w d h m s ms, each at most once and biggest first, whole numbers, at most {@link MAX_PROMETHEUS_DURATION_MS}.
 */
export function parsePrometheusDuration(text: string): number | undefined {
  if (text === "0") return 0;
  if (text === "") return undefined;
  const m = DURATION.exec(text);
  if (m === null) return undefined;
  let total = 0;
  DURATION_UNITS.forEach(([, ms], i) => {
    const n = m[i + 1];
    if (n !== undefined) total += Number(n) * ms;
  });
  // Exact below 2^53 ms; past the limit only "how far" is approximate, never the verdict.
  return total <= MAX_PROMETHEUS_DURATION_MS ? total : undefined;
}
