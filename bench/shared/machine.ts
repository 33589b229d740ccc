// The machine a report's figures were measured on, written one way by every benchmark that writes
// into docs/: machines of the same name differ (one "AMD EPYC" with AVX-512, another without), so
// a figure is quoted with its CPU model, its family/model/stepping, its SIMD flags, the cores and
// memory, and the machine's load before and after the run (DESIGN.md, performance protocol).
//
//   const loadAtStart = machineLoad();
//   … the measurements …
//   lines.push(...machineLines(loadAtStart, machineLoad()));
//
// Works in Deno and Node alike (node:child_process, node:fs, node:os); on a system without lscpu
// or /proc/cpuinfo it says what it could not find instead of failing the benchmark.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { arch, cpus, loadavg, totalmem } from 'node:os';

/** The SIMD flags a report names, present or not: what wasm SIMD and the native peers build on. */
export const X86_FLAGS = ['sse4_2', 'avx', 'avx2', 'bmi2', 'fma', 'avx512f', 'avx512bw', 'avx512vl'] as const;
export const ARM_FLAGS = ['asimd', 'neon', 'sve', 'sve2'] as const;

export interface Machine {
  /** lscpu's "Model name", else the runtime's own name for the first CPU. */
  model: string;
  /** "family 25 model 17 stepping 1" (x86), "implementer 0x41 part 0xd0c variant 0x3 revision 1" (Arm), or '' if unknown. */
  signature: string;
  /** node:os's architecture: 'x64', 'arm64', ... */
  arch: string;
  /** The flags of X86_FLAGS or ARM_FLAGS the CPU has, in that order. */
  flags: string[];
  /** The flags of that list it lacks. */
  missing: string[];
  /** Whether /proc/cpuinfo was there to read the flags from. */
  flagsKnown: boolean;
  /** Logical CPUs the runtime sees. */
  cores: number;
  memoryGiB: number;
  /** The whole description in one line, as machineLines() writes it. */
  line: string;
}

const run = (cmd: string, args: string[] = []): string => {
  try {
    const r = spawnSync(cmd, args, { encoding: 'utf8' });
    return r.status === 0 ? r.stdout.trim() : '';
  } catch {
    return '';
  }
};

const readCpuinfo = (): string => {
  try {
    return readFileSync('/proc/cpuinfo', 'utf8');
  } catch {
    return '';
  }
};

/** The fields of the first processor block of /proc/cpuinfo ("key : value" lines). */
function firstProcessor(cpuinfo: string): Map<string, string> {
  const fields = new Map<string, string>();
  for (const line of cpuinfo.split('\n')) {
    if (line.trim() === '') {
      if (fields.size) break;
      continue;
    }
    const colon = line.indexOf(':');
    if (colon < 0) continue;
    const key = line.slice(0, colon).trim();
    if (!fields.has(key)) fields.set(key, line.slice(colon + 1).trim());
  }
  return fields;
}

/**
 * Describes this machine: CPU model, signature, SIMD flags, cores, memory. `cpuinfo` and `lscpu`
 * are the texts of /proc/cpuinfo and of `lscpu` (read here unless given).
 */
export function describeMachine(cpuinfo: string = readCpuinfo(), lscpu: string = run('lscpu')): Machine {
  const lscpuModel = /^Model name:\s*(.+)$/m.exec(lscpu)?.[1]?.trim();
  const model = lscpuModel || cpus()[0]?.model?.trim() || 'unknown CPU';
  const info = firstProcessor(cpuinfo);
  const x86 = info.has('flags');
  const field = (k: string) => info.get(k) ?? '?';
  const signature = x86
    ? `family ${field('cpu family')} model ${field('model')} stepping ${field('stepping')}`
    : info.has('CPU implementer')
      ? `implementer ${field('CPU implementer')} part ${field('CPU part')} variant ${field('CPU variant')} revision ${field('CPU revision')}`
      : '';
  const have = new Set((info.get('flags') ?? info.get('Features') ?? '').split(/\s+/).filter(Boolean));
  const flagsKnown = have.size > 0;
  const list: readonly string[] = x86 || !info.has('Features') ? X86_FLAGS : ARM_FLAGS;
  const flags = list.filter((f) => have.has(f));
  const missing = list.filter((f) => !have.has(f));
  const cores = cpus().length;
  const memoryGiB = totalmem() / 2 ** 30;
  const line = [
    `CPU ${model}${signature ? ` (${signature})` : ''}, ${arch()}`,
    flagsKnown
      ? `flags ${flags.join(' ') || 'none'}${missing.length ? `, not ${missing.join(' ')}` : ''}`
      : 'flags unknown (no /proc/cpuinfo)',
    `${cores} core${cores === 1 ? '' : 's'}, ${memoryGiB.toFixed(1)} GiB`,
  ].join('; ');
  return { model, signature, arch: arch(), flags, missing, flagsKnown, cores, memoryGiB, line };
}

/** The machine's load now: `uptime`'s line, or the load averages where there is no `uptime`. */
export function machineLoad(): string {
  return (
    run('uptime') ||
    `load average: ${loadavg()
      .map((x) => x.toFixed(2))
      .join(', ')}`
  );
}

/**
 * The report's machine lines, one shape in every report (markdown list items):
 *   - Machine: CPU … (family … model … stepping …), x64; flags …, not …; N cores, M GiB
 *   - Load at start: `…`
 *   - Load at end: `…` (the end includes the benchmark's own work)
 */
export function machineLines(loadAtStart: string, loadAtEnd: string, machine: Machine = describeMachine()): string[] {
  return [
    `- Machine: ${machine.line}`,
    `- Load at start: \`${loadAtStart}\``,
    `- Load at end: \`${loadAtEnd}\` (the 1-minute figure includes this benchmark's own work)`,
  ];
}
