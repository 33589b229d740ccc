// CPU time from /proc/self/stat (Linux), for benchmarks that report CPU per item: the fields after
// the process name are state(0) ppid(1) … utime(11) stime(12) cutime(13) cstime(14), in clock
// ticks of USER_HZ (100 on Linux). Works in Deno and Node alike. The child scripts that Node runs
// transpiled alone or beside src/ only (bench/loader/tandem-child.ts, bench/text/child.ts,
// bench/parquet/child.ts) cannot import bench/shared/ and keep their own four lines.
import { readFileSync } from 'node:fs';

const USER_HZ = 100;

function statFields(): string[] {
  const stat = readFileSync('/proc/self/stat', 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}

/** utime + stime of this process, every thread included (pool threads, V8's), in seconds. */
export function processCpuSeconds(): number {
  const f = statFields();
  return (Number(f[11]) + Number(f[12])) / USER_HZ;
}

/** utime + stime of this process's children that have exited and been waited for, in seconds. */
export function exitedChildrenCpuSeconds(): number {
  const f = statFields();
  return (Number(f[13]) + Number(f[14])) / USER_HZ;
}
