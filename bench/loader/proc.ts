// A child process run under watch: its whole process tree (the child and every descendant, e.g.
// PyTorch's DataLoader workers) sampled from /proc every few milliseconds for resident and
// proportional memory and CPU time. Linux only.
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import process from 'node:process';

const TICKS = 100; // USER_HZ
const PAGE_KB = 4;

interface ProcStat {
  pid: number;
  ppid: number;
  /** pid and start time: a pid reused by another process counts as another process. */
  key: string;
  cpu: number;
  rssKb: number;
}

function readStat(pid: number): ProcStat | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // after the name: state(0) ppid(1) ... utime(11) stime(12) ... starttime(19) vsize(20) rss(21)
    return {
      pid,
      ppid: Number(f[1]),
      key: `${pid}:${f[19]}`,
      cpu: (Number(f[11]) + Number(f[12])) / TICKS,
      rssKb: Number(f[21]) * PAGE_KB,
    };
  } catch {
    return undefined; // exited meanwhile
  }
}

function readPssKb(pid: number): number {
  try {
    return Number(/^Pss:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'))?.[1] ?? 0);
  } catch {
    return 0;
  }
}

/** The process `root` and its live descendants, now. */
export function processTree(root: number): ProcStat[] {
  const all = readdirSync('/proc')
    .filter((n) => /^\d+$/.test(n))
    .map((n) => readStat(Number(n)))
    .filter((p): p is ProcStat => p !== undefined);
  const children = new Map<number, ProcStat[]>();
  for (const p of all) {
    const list = children.get(p.ppid);
    if (list) list.push(p);
    else children.set(p.ppid, [p]);
  }
  const out: ProcStat[] = [];
  const walk = (p: ProcStat) => {
    out.push(p);
    for (const c of children.get(p.pid) ?? []) walk(c);
  };
  const self = all.find((p) => p.pid === root);
  if (self) walk(self);
  return out;
}

export interface TreeUsage {
  /** Largest sum of the tree's resident memory over the samples (shared pages count in each process). */
  peakRssKb: number;
  /** Largest sum of the tree's proportional set size (shared pages split between their users), sampled less often. */
  peakPssKb: number;
  /** utime + stime summed over every process seen, each at its last sample. */
  cpuSeconds: number;
  maxProcesses: number;
  samples: number;
}

/** Children forked by the main thread of `pid` (cheap; children of other threads need a scan). */
function mainThreadChildren(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').split(' ').filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/**
 * Samples the tree of `root` every `intervalMs` until stop() is called. Each sample reads only the
 * tree's own /proc/PID/stat files, found through the main threads' `children` lists; a scan of all
 * of /proc every second catches children of other threads. PSS comes from smaps_rollup, which
 * costs milliseconds per large process (the kernel walks its page tables), so it is read once per
 * `pssEveryMs` only, to keep the sampler from taking CPU from the child it measures.
 */
export function watchTree(root: number, intervalMs = 50, pssEveryMs = 1000): { stop(): TreeUsage } {
  const lastCpu = new Map<string, number>();
  const usage: TreeUsage = { peakRssKb: 0, peakPssKb: 0, cpuSeconds: 0, maxProcesses: 0, samples: 0 };
  const scanEvery = Math.max(1, Math.round(1000 / intervalMs));
  const pssEvery = Math.max(1, Math.round(pssEveryMs / intervalMs));
  const sample = () => {
    let tree: ProcStat[];
    if (usage.samples % scanEvery === 0) {
      tree = processTree(root);
    } else {
      tree = [];
      const queue = [root];
      for (let pid = queue.shift(); pid !== undefined; pid = queue.shift()) {
        const p = readStat(pid);
        if (!p) continue;
        tree.push(p);
        queue.push(...mainThreadChildren(pid));
      }
    }
    if (tree.length === 0) return;
    let rss = 0;
    for (const p of tree) {
      rss += p.rssKb;
      lastCpu.set(p.key, p.cpu);
    }
    if (usage.samples % pssEvery === 0)
      usage.peakPssKb = Math.max(
        usage.peakPssKb,
        tree.reduce((s, p) => s + readPssKb(p.pid), 0),
      );
    usage.peakRssKb = Math.max(usage.peakRssKb, rss);
    usage.maxProcesses = Math.max(usage.maxProcesses, tree.length);
    usage.samples++;
  };
  sample();
  const timer = setInterval(sample, intervalMs);
  return {
    stop() {
      clearInterval(timer);
      usage.cpuSeconds = [...lastCpu.values()].reduce((s, c) => s + c, 0);
      return usage;
    },
  };
}

/** Busy CPU seconds of the whole machine so far (every core: user, nice, system, irq, softirq, steal). */
export function machineBusySeconds(): number {
  const f = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  // user nice system idle iowait irq softirq steal (guest time is already in user)
  return ((f[0] ?? 0) + (f[1] ?? 0) + (f[2] ?? 0) + (f[5] ?? 0) + (f[6] ?? 0) + (f[7] ?? 0)) / TICKS;
}

/** This process's own CPU seconds (the parent: its sampler and bookkeeping). */
function ownCpuSeconds(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
}

/** Cores kept busy by the whole machine over the next `ms` milliseconds, this process excluded. */
export async function busyCores(ms: number): Promise<number> {
  const b0 = machineBusySeconds(),
    c0 = ownCpuSeconds(),
    t0 = performance.now();
  await new Promise((resolve) => setTimeout(resolve, ms));
  return (machineBusySeconds() - b0 - (ownCpuSeconds() - c0)) / ((performance.now() - t0) / 1000);
}

export interface Watched {
  code: number | null;
  stdout: string;
  stderr: string;
  /** From spawn to exit, as the parent saw it. */
  wallSeconds: number;
  tree: TreeUsage;
  /**
   * Cores kept busy meanwhile by everything but the child's tree and this parent: other people's
   * work on a shared machine (0 on a quiet one; the tree's CPU is its last samples, so ±0.02).
   */
  foreignCores: number;
  /** The parent's own CPU meanwhile (its /proc sampler), in seconds. */
  parentCpuSeconds: number;
}

/** Runs a command with its process tree under watch; resolves when it has exited. */
export function runWatched(
  command: string,
  args: readonly string[],
  opts: { cwd?: string; env?: NodeJS.ProcessEnv; intervalMs?: number } = {},
): Promise<Watched> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const busy0 = machineBusySeconds(),
      own0 = ownCpuSeconds();
    const child = spawn(command, args, { cwd: opts.cwd, env: opts.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '',
      stderr = '';
    child.stdout.setEncoding('utf8').on('data', (s: string) => (stdout += s));
    child.stderr.setEncoding('utf8').on('data', (s: string) => (stderr += s));
    child.on('error', reject);
    if (child.pid === undefined) return; // 'error' follows
    const watch = watchTree(child.pid, opts.intervalMs ?? 50);
    child.on('close', (code) => {
      const tree = watch.stop();
      const wallSeconds = (performance.now() - t0) / 1000;
      const parentCpuSeconds = ownCpuSeconds() - own0;
      const foreign = machineBusySeconds() - busy0 - parentCpuSeconds - tree.cpuSeconds;
      resolve({ code, stdout, stderr, wallSeconds, tree, foreignCores: Math.max(0, foreign) / wallSeconds, parentCpuSeconds });
    });
  });
}
