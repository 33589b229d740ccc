// Node's WebGPU (dawn.node) writes adapter warnings straight to the process's stderr from native
// code, where JS cannot catch them. A command-line run that should stay quiet therefore runs in a
// child process whose stderr passes through a line filter. Deno and browsers need none of this.
import { runtimeName } from './detect.ts';

const CHILD_MARK = 'TANDEM_STDERR_FILTERED';

/** The signals a parent passes on to the child, with their numbers for the exit code (128 + n). */
const FORWARDED = { SIGHUP: 1, SIGINT: 2, SIGTERM: 15 } as const;
type Forwarded = keyof typeof FORWARDED;
const SIGNAL_NUMBERS: Record<string, number> = { ...FORWARDED, SIGKILL: 9, SIGABRT: 6, SIGSEGV: 11 };

interface NodeChildProcess {
  spawn(
    command: string,
    args: string[],
    options: { stdio: ['inherit', 'inherit', 'pipe', 'ipc']; env: Record<string, string | undefined> },
  ): {
    stderr: { setEncoding(e: string): void; on(event: 'data', cb: (chunk: string) => void): void; on(event: 'end', cb: () => void): void };
    on(event: 'exit', cb: (code: number | null, signal: string | null) => void): void;
    kill(signal: Forwarded): boolean;
  };
}
interface NodeProcess {
  execPath: string;
  execArgv: string[];
  argv: string[];
  env: Record<string, string | undefined>;
  stderr: { write(s: string): void };
  channel?: { unref(): void };
  on(event: 'disconnect', cb: () => void): void;
  on(event: Forwarded, cb: () => void): void;
  exit(code: number): never;
}

/**
 * In Node, re-runs this command line in a child whose stderr lines matching `drop` are discarded,
 * and resolves with the child's exit code; resolves with undefined where nothing needs filtering
 * (Deno, or already the child), and the caller then runs the command itself.
 *
 * The two processes live and die together: SIGHUP, SIGINT and SIGTERM sent to the parent are
 * passed on to the child, and a child whose parent is gone (killed with SIGKILL, where nothing
 * can be passed on) sees its IPC channel close and exits at once, so `kill -9` of a training
 * run never leaves one training on unseen.
 */
export async function rerunWithFilteredStderr(drop: RegExp): Promise<number | undefined> {
  const proc = (globalThis as { process?: NodeProcess }).process;
  if (runtimeName !== 'node' || !proc) return undefined;
  if (proc.env[CHILD_MARK]) {
    if (proc.channel) {
      proc.channel.unref(); // the channel only watches the parent: it must not keep this process alive
      proc.on('disconnect', () => proc.exit(128 + FORWARDED.SIGHUP));
    }
    return undefined;
  }
  const { spawn } = (await import(/* @vite-ignore */ /* webpackIgnore: true */ 'node:child_process')) as NodeChildProcess;
  const child = spawn(proc.execPath, [...proc.execArgv, ...proc.argv.slice(1)], {
    stdio: ['inherit', 'inherit', 'pipe', 'ipc'],
    env: { ...proc.env, [CHILD_MARK]: '1' },
  });
  for (const signal of Object.keys(FORWARDED) as Forwarded[]) proc.on(signal, () => child.kill(signal));
  let pending = '';
  const pass = (line: string) => !drop.test(line) && proc.stderr.write(`${line}\n`);
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (chunk) => {
    const lines = (pending + chunk).split('\n');
    pending = lines.pop() ?? '';
    lines.forEach(pass);
  });
  return new Promise((resolve) => {
    let exited: number | undefined;
    let ended = false;
    const done = () => exited !== undefined && ended && resolve(exited);
    child.stderr.on('end', () => {
      if (pending) pass(pending);
      ended = true;
      done();
    });
    child.on('exit', (code, signal) => {
      exited = code ?? (signal ? 128 + (SIGNAL_NUMBERS[signal] ?? 1) : 1);
      done();
    });
  });
}
