// SIGKILL at random moments of a GPT training run over token shards, each run resumed from its last
// checkpoint (the weights, the optimizer and the loader's state in one file): the batches, as the
// runs hand them out, and the final weights bit for bit are those of a run that never stopped.
import './limits.ts';
import { corpusDocuments, corpusIds, CORPUS_BOS, CORPUS_EOS, CORPUS_VOCAB_SIZE } from '../../src/synthetic/index.ts';
import { writeTokenShards } from '../../src/sources/index.ts';
import { seededFloats } from '../../src/random/index.ts';

const CHILD = new URL('../shared/text-resume-child.ts', import.meta.url).pathname;
const MIN_KILLS = 6;

/** Runs the child; with `kill`, SIGKILLs it `kill.extraMs` after its log reaches batch `kill.at`. */
async function run(dir: string, data: string, kill?: { at: number; extraMs: number }): Promise<{ killed: boolean }> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ['run', '-A', '--no-check', CHILD, dir, '3', data],
    stdout: 'null',
    stderr: 'piped',
  }).spawn();
  let killed = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const poll = kill
    ? setInterval(() => {
        const log = (() => {
          try {
            return Deno.readTextFileSync(`${dir}/batches.log`);
          } catch {
            return '';
          }
        })();
        if (!log.includes(`\n${kill.at} `)) return;
        clearInterval(poll);
        timer = setTimeout(() => {
          try {
            child.kill('SIGKILL');
            killed = true;
          } catch {
            // it had already exited
          }
        }, kill.extraMs);
      }, 3)
    : undefined;
  const out = await child.output();
  clearInterval(poll);
  clearTimeout(timer);
  if (!killed && !out.success) throw new Error(`child failed: ${new TextDecoder().decode(out.stderr).slice(-2000)}`);
  return { killed: killed && !out.success };
}

/** The batches a sequence of runs handed out: a resume after N batches continues the list from N. */
function batchesOf(log: string): { hashes: string[]; done: boolean; weights: string | undefined; resumes: number[] } {
  const hashes: string[] = [];
  const resumes: number[] = [];
  let done = false;
  let weights: string | undefined;
  for (const line of log.split('\n')) {
    const [a, b, c] = line.split(' ');
    if (a === 'resume') {
      resumes.push(Number(b));
      hashes.length = Number(b);
    } else if (a === 'done') {
      done = true;
      weights = c;
    } else if (a && b && /^\d+$/.test(a)) hashes[Number(a) - 1] = b;
  }
  return { hashes, done, weights, resumes };
}

Deno.test(`token shards → GPT: SIGKILL at ${MIN_KILLS}+ random steps, each run resumed from its checkpoint (weights, optimizer, loader state), the same batches and final weights as a run that never stopped`, async () => {
  const root = await Deno.makeTempDir();
  try {
    const data = `${root}/data`;
    const docs = corpusDocuments(21, 36).map((t) => [CORPUS_BOS, ...corpusIds(t), CORPUS_EOS]);
    await writeTokenShards(docs, { dir: data, tokensPerShard: 4000, vocabSize: CORPUS_VOCAB_SIZE });
    const whole = `${root}/whole`;
    await Deno.mkdir(whole);
    const t0 = performance.now();
    await run(whole, data);
    const wholeMs = performance.now() - t0;
    const reference = batchesOf(await Deno.readTextFile(`${whole}/batches.log`));
    if (!reference.done || reference.hashes.length < 24) throw new Error(`an uninterrupted run of ${reference.hashes.length} batches`);
    const killedDir = `${root}/killed`;
    await Deno.mkdir(killedDir);
    const random = seededFloats(0x7e47);
    let kills = 0;
    for (let attempt = 0; attempt < 40; attempt++) {
      const log = await Deno.readTextFile(`${killedDir}/batches.log`).catch(() => '');
      const sofar = batchesOf(log);
      if (sofar.done) break;
      // Kill somewhere in what is left of the run (it resumes from its last checkpoint), until enough kills; then let it finish.
      const from = sofar.resumes.length === 0 && sofar.hashes.length === 0 ? 0 : sofar.hashes.length;
      const at = from + 1 + Math.floor(random() * Math.max(1, (reference.hashes.length - from - 2) / 3));
      const r = await run(killedDir, data, kills < MIN_KILLS && at < reference.hashes.length ? { at, extraMs: random() * 6 } : undefined);
      if (r.killed) kills++;
    }
    const got = batchesOf(await Deno.readTextFile(`${killedDir}/batches.log`));
    if (!got.done) throw new Error('the killed runs never finished');
    if (kills < MIN_KILLS) throw new Error(`only ${kills} kills landed`);
    if (got.hashes.join() !== reference.hashes.join())
      throw new Error(
        `resumed runs handed out other batches (first difference at ${got.hashes.findIndex((h, i) => h !== reference.hashes[i])})`,
      );
    if (got.weights === undefined || got.weights !== reference.weights)
      throw new Error(`the final weights differ from the uninterrupted run's: ${got.weights} against ${reference.weights}`);
    console.log(
      `[text resume] final weights ${got.weights} in both; ${kills} kills, resumed at batches ${got.resumes.join(', ')}; ${reference.hashes.length} batches; an uninterrupted run takes ${(wholeMs / 1000).toFixed(1)} s`,
    );
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
