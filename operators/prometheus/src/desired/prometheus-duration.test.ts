// parsePrometheusDuration against Prometheus's own parser (model.ParseDuration of prometheus/common, which every 3.x
// release loads its configuration with): each row's verdict is what that function gives (checked by running it).
// The callers rely on these: select.ts (an endpoint's interval and scrapeTimeout, refused per monitor as
// InvalidDuration) and validate.ts (a rule group's interval and query_offset, a rule's for and keep_firing_for).
import { describe, expect, it } from "vitest";
import { parsePrometheusDuration } from "./prometheus-duration.ts";

const S = 1000;
const D = 86_400 * S;

describe("parsePrometheusDuration: model.ParseDuration's verdicts, in milliseconds", () => {
  it.each<[string, number | undefined]>([
    // Accepted: "0" without a unit, units y w d h m s ms each at most once, biggest first, whole numbers.
    ["0", 0],
    ["0s", 0],
    ["0y", 0],
    ["30s", 30 * S],
    ["100ms", 100],
    ["1h30m", 5_400 * S],
    ["15d", 15 * D],
    ["01m", 60 * S],
    ["1s0ms", S],
    ["1y2w3d4h5m6s7ms", 365 * D + 14 * D + 3 * D + 4 * 3_600 * S + 5 * 60 * S + 6 * S + 7],
    // Refused: empty, no unit, out of order, repeated, fractions, other units and cases, signs, spaces.
    ["", undefined],
    ["5", undefined],
    ["00", undefined],
    ["1m1h", undefined],
    ["1h1h", undefined],
    ["1.5h", undefined],
    ["1H", undefined],
    ["1us", undefined],
    ["1ns", undefined],
    ["-1s", undefined],
    [" 1s", undefined],
    ["1s ", undefined],
    // The limit: a time.Duration (int64 nanoseconds, about 292 years); more is "duration out of range".
    ["292y", 292 * 365 * D],
    ["106751d", 106_751 * D],
    ["9223372036854ms", 9_223_372_036_854],
    ["292y3w", 292 * 365 * D + 21 * D],
    ["293y", undefined],
    ["106752d", undefined],
    ["9223372036855ms", undefined],
    ["292y30w", undefined],
    ["99999999999999999999s", undefined],
  ])("%j -> %s", (text, ms) => {
    expect(parsePrometheusDuration(text)).toBe(ms);
  });
});
