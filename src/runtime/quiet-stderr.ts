// Node's WebGPU (dawn.node) writes adapter warnings straight to the process's stderr from native
// code, where JS cannot catch them. A command-line run that should stay quiet therefore runs in a
// child process whose stderr passes through a line filter. Deno and browsers need none of this.
import { runtimeName } from './detect.ts';

const CHILD_MARK = 'TANDEM_STDERR_FILTERED';

interface NodeChildProcess {
  spawn(
    command: string,
    args: string[],
    options: { stdio: ['inherit', 'inherit', 'pipe']; env: Record<string, string | undefined> },
  ): {
    stderr: { setEncoding(e: string): void; on(event: 'data', cb: (chunk: string) => void): void; on(event: 'end', cb: () => void): void };
    on(event: 'exit', cb: (code: number | null, signal: string | null) => void): void;
  };
}
interface NodeProcess {
  execPath: string;
  execArgv: string[];
  argv: string[];
  env: Record<string, string | undefined>;
  stderr: { write(s: string): void };
}

/**
 * In Node, re-runs this command line in a child whose stderr lines matching `drop` are discarded,
 * and resolves with the child's exit code; resolves with undefined where nothing needs filtering
 * (Deno, or already the child), and the caller then runs the command itself.
 */
export async function rerunWithFilteredStderr(drop: RegExp): Promise<number | undefined> {
  const proc = (globalThis as { process?: NodeProcess }).process;
  if (runtimeName !== 'node' || !proc || proc.env[CHILD_MARK]) return undefined;
  const { spawn } = (await import(/* @vite-ignore */ /* webpackIgnore: true */ 'node:child_process')) as NodeChildProcess;
  const child = spawn(proc.execPath, [...proc.execArgv, ...proc.argv.slice(1)], {
    stdio: ['inherit', 'inherit', 'pipe'],
    env: { ...proc.env, [CHILD_MARK]: '1' },
  });
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
      exited = code ?? (signal ? 128 + 2 : 1);
      done();
    });
  });
}
