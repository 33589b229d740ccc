// Workers start wherever the caller's Node runs: the decode pool's pthreads and its worker
// fallback, and the tokenizer workers, under `node --input-type=module` (with -e or standard input)
// and with flags a worker refuses when given explicitly; a worker that cannot start is a typed
// error on the caller, never an uncaught event that ends its process. Run as a user runs it: the
// built package (dist/, as the unit tier's CLI tests use it) in a child `node`.
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const dist = new URL('../../dist/', import.meta.url).href;

/** Decodes a BMP in both pool modes and tokenises two documents in a worker; prints one JSON line. */
const script = `
import { DecodePool } from '${dist}index.js';
import { encodeBmp } from '${dist}synthetic/index.js';
import { textLoader } from '${dist}text/index.js';
import { corpusDocuments, corpusTokenizerJson } from '${dist}train/index.js';
const outcome = {};
const typed = (error) => \`\${error.name}:\${error.code ?? ''}\`;
const bmp = encodeBmp(new Uint8Array(4 * 4 * 3).fill(200), 4, 4);
for (const mode of ['pthreads', 'workers']) {
  try {
    const pool = await DecodePool.create({ threads: 2, mode });
    const { info } = await pool.decode(bmp, { width: 2, height: 2 });
    outcome[mode] = \`\${pool.mode} \${info.format}\`;
    await pool.close();
  } catch (error) {
    outcome[mode] = typed(error);
  }
}
try {
  const text = textLoader({ texts: corpusDocuments(2, 4) }, { seqLen: 16, batchSize: 2, tokenizer: { json: corpusTokenizerJson() }, tokenizerWorkers: 1 });
  let rows = 0;
  for await (const batch of text) {
    rows += batch.count;
    batch.release();
  }
  outcome.tokens = rows > 0 ? 'rows' : 'none';
  outcome.failed = text.failures().map((f) => typed(f.error));
  await text.close();
} catch (error) {
  outcome.tokens = typed(error);
}
console.log(JSON.stringify(outcome));
`;

function node(args: string[], stdin?: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    // Killed before the test's own limit: a child that hangs must not outlive the test.
    const child = spawn(process.execPath, args, { stdio: ['pipe', 'pipe', 'pipe'], timeout: 45_000, killSignal: 'SIGKILL' });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(stdin ?? '');
  });
}

const lastLine = (stdout: string) => JSON.parse(stdout.trim().split('\n').at(-1) ?? '{}') as Record<string, unknown>;
const WORKING = { pthreads: 'pthreads bmp', workers: 'workers bmp', tokens: 'rows', failed: [] };

describe('workers start wherever the caller runs (Node)', () => {
  it('node --input-type=module -e: pthreads, worker fallback and tokenizer workers all start', async () => {
    const r = await node(['--input-type=module', '-e', script]);
    expect(r.stderr).not.toMatch(/ERR_|Error/);
    expect({ code: r.code, ...lastLine(r.stdout) }).toEqual({ code: 0, ...WORKING });
  }, 60_000);

  it('node --input-type=module reading the program from standard input: the same', async () => {
    const r = await node(['--input-type=module'], script);
    expect({ code: r.code, ...lastLine(r.stdout) }).toEqual({ code: 0, ...WORKING });
  }, 60_000);

  it('with per-process flags beside it (--expose-gc, --max-old-space-size), which a worker refuses when given explicitly', async () => {
    const r = await node(['--expose-gc', '--max-old-space-size=2048', '--input-type', 'module', '-e', script]);
    expect({ code: r.code, ...lastLine(r.stdout) }).toEqual({ code: 0, ...WORKING });
  }, 60_000);

  it('a worker that cannot start is a typed error, and the process lives on to report it', async () => {
    // A preload that throws in every worker thread, but not on the main one.
    const dir = mkdtempSync(join(tmpdir(), 'tandem-worker-flags-'));
    const preload = join(dir, 'no-workers.cjs');
    writeFileSync(preload, "if (!require('node:worker_threads').isMainThread) throw new Error('no workers here');\n");
    const r = await node(['--require', preload, '--input-type=module', '-e', script]);
    const outcome = lastLine(r.stdout);
    expect(r.code, r.stderr).toBe(0);
    expect(outcome.pthreads).toBe('WorkerError:worker-crashed');
    expect(outcome.workers).toMatch(/^(WorkerError|DecodeError):/);
    // The tokenizer workers' failure reaches the loader as a typed error (thrown, or each document's).
    const failed = (outcome.failed as string[] | undefined) ?? [];
    expect(outcome.tokens === 'none' ? failed : [outcome.tokens]).not.toEqual([]);
    for (const error of outcome.tokens === 'none' ? failed : [outcome.tokens]) expect(error).toMatch(/^(WorkerError|TextError):/);
  }, 60_000);
});
