// What the benchmarks read from /proc: a process's CPU time, the machine's CPU counters (steal, other
// processes), and the memory of a process tree.
import { readFileSync } from 'node:fs';

/** utime + stime of a process (all its threads), in clock ticks (USER_HZ = 100 on Linux). */
export function cpuTicks(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return NaN;
  }
}

export interface SystemTicks {
  total: number;
  busy: number;
  steal: number;
}

export function systemTicks(): SystemTicks {
  try {
    const cpu = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
    const [user, nice, system, idle, iowait, irq, softirq, steal] = cpu;
    const total = user + nice + system + idle + iowait + irq + softirq + steal;
    return { total, busy: total - idle - iowait, steal };
  } catch {
    return { total: NaN, busy: NaN, steal: NaN };
  }
}

/** A process and all its descendants (e.g. Chromium's processes). */
export function processTree(pid: number): number[] {
  const kids = (p: number): number[] => {
    try {
      return readFileSync(`/proc/${p}/task/${p}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
    } catch {
      return [];
    }
  };
  const all = [pid];
  for (let i = 0; i < all.length; i++) all.push(...kids(all[i]));
  return all;
}

/** Memory of processes in MB, summed: PSS (shared pages split between the processes sharing them —
 * summing RSS would count Chromium's shared libraries once per process), RSS where PSS is unreadable. */
export function pssMb(pids: number[]): number {
  const one = (p: number) => {
    try {
      return Number(/Pss:\s+(\d+)/.exec(readFileSync(`/proc/${p}/smaps_rollup`, 'utf8'))?.[1] ?? 0) / 1024;
    } catch {
      try {
        return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${p}/status`, 'utf8'))?.[1] ?? 0) / 1024;
      } catch {
        return 0;
      }
    }
  };
  return pids.reduce((sum, p) => sum + one(p), 0);
}

/** RSS of processes in MB, summed (counts shared pages once per process: an upper bound). */
export function rssMb(pids: number[]): number {
  return pids.reduce((sum, p) => {
    try {
      return sum + Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${p}/status`, 'utf8'))?.[1] ?? 0) / 1024;
    } catch {
      return sum;
    }
  }, 0);
}
