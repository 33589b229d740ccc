// A child process that a kill test may signal at a chosen moment: run to its end, or signalled
// (SIGKILL unless told) `extraMs` after `when` first holds (polled every 5 ms). Runtime-neutral
// through node:child_process, which Deno provides.
import { spawn } from 'node:child_process';
import process from 'node:process';

export interface Kill {
  when: () => boolean;
  extraMs: number;
  signal?: 'SIGKILL' | 'SIGTERM';
}

export interface ChildExit {
  code: number | null;
  signal: string | null;
  /** Whether the signal was sent before the child exited. */
  killed: boolean;
  stdout: string;
  stderr: string;
}

/** Resolves once the child has exited and its output has closed; a child past `limitMs` is killed. */
export function runKillable(
  command: string,
  args: string[],
  options: { kill?: Kill; env?: Record<string, string>; limitMs: number },
): Promise<ChildExit> {
  const { kill, env = {}, limitMs } = options;
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Uint8Array) => (stdout += new TextDecoder().decode(d)));
    child.stderr.on('data', (d: Uint8Array) => (stderr += new TextDecoder().decode(d)));
    let killed = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const poll = kill
      ? setInterval(() => {
          if (!kill.when()) return;
          clearInterval(poll);
          timer = setTimeout(() => (killed = child.kill(kill.signal ?? 'SIGKILL')), kill.extraMs);
        }, 5)
      : undefined;
    const limit = setTimeout(() => child.kill('SIGKILL'), limitMs);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      clearInterval(poll);
      clearTimeout(limit);
      resolve({ code, signal, killed, stdout, stderr });
    });
  });
}
