// CPU time and memory of a process tree from /proc (Linux): the Deno process alone, or Deno plus
// the Chromium it launched (renderer, GPU and utility processes included).
import { readdirSync, readFileSync } from 'node:fs';
import process from 'node:process';

const TICKS = 100; // USER_HZ on Linux

interface ProcInfo {
  pid: number;
  ppid: number;
  cpu: number;
  rssKb: number;
}

function readProc(pid: number): ProcInfo | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // fields after the name: state(0) ppid(1) ... utime(11) stime(12) ... rss pages(21)
    return { pid, ppid: Number(f[1]), cpu: (Number(f[11]) + Number(f[12])) / TICKS, rssKb: Number(f[21]) * 4 };
  } catch {
    return undefined; // exited meanwhile
  }
}

function tree(root: number): ProcInfo[] {
  const all = readdirSync('/proc')
    .filter((n) => /^\d+$/.test(n))
    .map((n) => readProc(Number(n)))
    .filter((p): p is ProcInfo => !!p);
  const children = new Map<number, ProcInfo[]>();
  for (const p of all) children.set(p.ppid, [...(children.get(p.ppid) ?? []), p]);
  const out: ProcInfo[] = [];
  const walk = (pid: number) => {
    for (const c of children.get(pid) ?? []) out.push(c), walk(c.pid);
  };
  const self = all.find((p) => p.pid === root);
  if (self) out.push(self);
  walk(root);
  return out;
}

/** CPU seconds (user + system) of this process alone, all threads. */
export function selfCpuSeconds(): number {
  return readProc(process.pid)?.cpu ?? 0;
}

/** CPU seconds (user + system) of this process and every live descendant. */
export function treeCpuSeconds(): number {
  return tree(process.pid).reduce((s, p) => s + p.cpu, 0);
}

/** Resident memory now of this process and its descendants, and this process's own peak (VmHWM). */
export function treeMemory(): { rssKb: number; selfPeakKb: number; processes: number } {
  const t = tree(process.pid);
  const hwm = /VmHWM:\s+(\d+)/.exec(readFileSync('/proc/self/status', 'utf8'));
  return { rssKb: t.reduce((s, p) => s + p.rssKb, 0), selfPeakKb: hwm ? Number(hwm[1]) : 0, processes: t.length };
}
