// Structured JSON logging (pino). Components take a Logger and add their own bindings with child().
import { type Logger, pino } from "pino";

export type { Logger } from "pino";

export interface LoggerOptions {
  /** pino level; default from LOG_LEVEL, else "info". */
  level?: string;
  name?: string;
}

/** A JSON logger writing to stdout. */
export function createLogger(options: LoggerOptions = {}): Logger {
  return pino({
    level: options.level ?? process.env.LOG_LEVEL ?? "info",
    ...(options.name === undefined ? {} : { name: options.name }),
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
  });
}

/** A logger that discards everything; the default for components created without one. */
export const silentLogger: Logger = pino({ level: "silent" });
