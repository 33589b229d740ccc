// Where progress goes: a terminal gets one bar redrawn in place, anything else (a pipe, a log
// file, CI) gets plain lines. The only Node/Deno difference the CLI has of its own.
interface NodeStdout {
  isTTY?: boolean;
  columns?: number;
  write(s: string): boolean;
}
interface DenoStdout {
  isTerminal(): boolean;
  writeSync(b: Uint8Array): number;
}

const denoStdout = (globalThis as unknown as { Deno?: { stdout: DenoStdout; consoleSize?: () => { columns: number } } }).Deno;
const nodeStdout = (globalThis as { process?: { stdout?: NodeStdout } }).process?.stdout;

export interface Terminal {
  readonly interactive: boolean;
  /** Replaces the current status line (terminals only). */
  status(line: string): void;
  /** Prints a line above the status line. */
  log(line: string): void;
  /** Leaves the status line as the last printed line. */
  done(): void;
}

export function openTerminal(force?: boolean): Terminal {
  const interactive = force ?? (denoStdout ? denoStdout.stdout.isTerminal() : nodeStdout?.isTTY === true);
  const encoder = new TextEncoder();
  const write = (s: string) => (denoStdout ? denoStdout.stdout.writeSync(encoder.encode(s)) : nodeStdout?.write(s));
  const columns = () => (denoStdout ? (safe(() => denoStdout.consoleSize?.().columns) ?? 100) : (nodeStdout?.columns ?? 100));
  let shown = '';
  return {
    interactive,
    status(line) {
      if (!interactive) return;
      shown = line.slice(0, columns() - 1);
      write(`\r\x1b[2K${shown}`);
    },
    log(line) {
      if (interactive && shown) write(`\r\x1b[2K${line}\n${shown}`);
      else console.log(line);
    },
    done() {
      if (interactive && shown) write('\n');
      shown = '';
    },
  };
}

function safe<T>(f: () => T): T | undefined {
  try {
    return f();
  } catch {
    return undefined;
  }
}

/** `[#####.....] 42%` */
export function bar(fraction: number, width = 24): string {
  const done = Math.max(0, Math.min(width, Math.round(fraction * width)));
  return `[${'#'.repeat(done)}${'.'.repeat(width - done)}] ${(fraction * 100).toFixed(0).padStart(3)}%`;
}

export function duration(seconds: number): string {
  if (!Number.isFinite(seconds)) return '?';
  const s = Math.round(seconds);
  return s >= 60 ? `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s` : `${s}s`;
}
