// What the footprint benchmark reads of a running process from /proc: resident set (now and peak), CPU time and
// start time, and which process runs a pod's container (the local cluster's containers are host processes, each in
// a cgroup named after its pod's UID).
import { readdirSync, readFileSync } from "node:fs";

/** Clock ticks per second of /proc/<pid>/stat's times (USER_HZ, 100 on every Linux this runs on). */
const TICKS_PER_SECOND = 100;

/** One reading of a process. */
export interface ProcSample {
  /** performance.timeOrigin + performance.now() of the reading, in ms. */
  at: number;
  rssBytes: number;
  /** Peak resident set since the process started (VmHWM). */
  hwmBytes: number;
  /** User + system CPU time since the process started, in seconds (every thread). */
  cpuSeconds: number;
}

const kib = (status: string, field: string): number => {
  const m = new RegExp(`^${field}:\\s+(\\d+) kB$`, "m").exec(status);
  return m ? Number(m[1]) * 1024 : 0;
};

/** The fields of /proc/<pid>/stat after the command name (which may hold spaces). */
function statFields(pid: number): string[] {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
}

/** Reads `pid` now; throws when it is gone. */
export function sample(pid: number): ProcSample {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const fields = statFields(pid);
  // utime and stime are fields 14 and 15 of stat, so 11 and 12 after the command name (which is field 2).
  const cpuTicks = Number(fields[11]) + Number(fields[12]);
  return {
    at: performance.timeOrigin + performance.now(),
    rssBytes: kib(status, "VmRSS"),
    hwmBytes: kib(status, "VmHWM"),
    cpuSeconds: cpuTicks / TICKS_PER_SECOND,
  };
}

/** When `pid` started, in ms since the epoch (from its stat start time and the boot time), to 10 ms. */
export function startedAt(pid: number): number {
  const btime = Number(/^btime (\d+)$/m.exec(readFileSync("/proc/stat", "utf8"))?.[1]);
  const startTicks = Number(statFields(pid)[19]);
  return btime * 1000 + (startTicks / TICKS_PER_SECOND) * 1000;
}

/**
 * The host process that runs `/app/main.js` (an operator image's entry point) in the pod with UID `podUid`, if
 * one runs on this machine: the local cluster's kubelet puts each container in a cgroup whose path names the pod
 * (`pod<uid>`, with dashes, or underscores under the systemd driver).
 */
export function podProcess(podUid: string, command = "/app/main.js"): number | undefined {
  const ids = [podUid, podUid.replaceAll("-", "_")];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cgroup = readFileSync(`/proc/${entry}/cgroup`, "utf8");
      if (!ids.some((id) => cgroup.includes(`pod${id}`))) continue;
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0");
      if (cmdline.includes(command)) return Number(entry);
    } catch {
      // the process ended while we looked
    }
  }
  return undefined;
}
