// The `tandem` command line: unknown options and bad values are usage errors (one line, exit 2),
// checked in-process and through the built CLI as a user runs it.
import { execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { UsageError } from '../../src/cli/args.ts';
import { runCommand } from '../../src/cli/commands.ts';

const cli = new URL('../../dist/cli/main.js', import.meta.url).pathname;
const run = (args: string[]) =>
  new Promise<{ code: number; stderr: string }>((resolve) =>
    execFile('node', [cli, ...args], (error, _stdout, stderr) => resolve({ code: error ? Number(error.code) : 0, stderr })),
  );

describe('tandem command line', () => {
  const empty = mkdtempSync(join(tmpdir(), 'tandem-empty-'));
  const cases: Array<[string[], RegExp]> = [
    [['train', '--bogus', '1'], /Unknown option '--bogus'/],
    [['train', '--epochs', '0'], /--epochs must be a positive integer, got "0"/],
    [['train', '--lr', 'fast'], /--lr must be a positive number/],
    [['train', '--data', '/nonexistent-tandem-folder'], /no such file or folder/],
    [['train', '--data', empty], /no class subfolders/],
    [['train', '--progress', 'fancy'], /--progress takes bar or lines/],
    [['profile', '--concurrency', '1,x'], /--concurrency takes positive integers/],
    [['frobnicate'], /unknown command "frobnicate"/],
  ];
  for (const [args, message] of cases) {
    it(`${args.join(' ')}: a usage error`, async () => {
      await expect(runCommand(args, () => {})).rejects.toSatisfy((e: unknown) => e instanceof UsageError && message.test(e.message));
    });
  }
  it('the built CLI prints one line and exits 2 for a usage error, 0 for --help', async () => {
    const bad = await run(['train', '--epochs', '0']);
    expect(bad.code).toBe(2);
    expect(bad.stderr.trim().split('\n')).toEqual(['tandem: --epochs must be a positive integer, got "0"']);
    expect((await run(['train', '--help'])).code).toBe(0);
    const verbose = await run(['train', '--epochs', '0', '--verbose']);
    expect(verbose.code).toBe(2);
    expect(verbose.stderr).toMatch(/at numberFlag/); // the stack, only when asked for
  });
});
