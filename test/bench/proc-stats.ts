// What the benchmarks read from /proc: a process's CPU time, the machine's CPU counters (steal, other
// processes), and the memory of a process tree.
import { readdirSync, readFileSync } from 'node:fs';

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

/** A process and all its descendants (e.g. Chromium's processes). A child is listed under the thread
 * that started it (Chromium launches renderers from a thread of its own), so every thread is read. */
export function processTree(pid: number): number[] {
  const kids = (p: number): number[] => {
    try {
      return readdirSync(`/proc/${p}/task`).flatMap((task) => {
        try {
          return readFileSync(`/proc/${p}/task/${task}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
        } catch {
          return [];
        }
      });
    } catch {
      return [];
    }
  };
  const all = [pid];
  for (let i = 0; i < all.length; i++) all.push(...kids(all[i]));
  return all;
}

export interface TreeMemory {
  /** Σ proportional set size: shared pages split among *all* processes mapping them, other programs'
   * included (another Chromium on the machine lowers it). */
  pssMb: number;
  /** Σ private pages (USS): what is the tree's alone. */
  privateMb: number;
  /** Σ RSS: shared pages counted once per process (an upper bound). */
  rssMb: number;
  /** What the tree keeps resident with its shared pages counted once, as on a machine of its own:
   * Σ private + the shared pages of its largest sharer (the libraries and binary every Chromium process
   * maps) — the figure of the memory target. */
  residentMb: number;
}

const field = (text: string, name: string) => Number(new RegExp(`^${name}:\\s+(\\d+)`, 'm').exec(text)?.[1] ?? 0) / 1024;

export function treeMemory(pids: number[]): TreeMemory {
  let pss = 0;
  let priv = 0;
  let rss = 0;
  let maxShared = 0;
  for (const p of pids) {
    let text: string;
    try {
      text = readFileSync(`/proc/${p}/smaps_rollup`, 'utf8');
    } catch {
      continue;
    }
    const shared = field(text, 'Shared_Clean') + field(text, 'Shared_Dirty');
    pss += field(text, 'Pss');
    priv += field(text, 'Private_Clean') + field(text, 'Private_Dirty');
    rss += field(text, 'Rss');
    maxShared = Math.max(maxShared, shared);
  }
  return { pssMb: pss, privateMb: priv, rssMb: rss, residentMb: priv + maxShared };
}
