// A tiny GPT trained from token shards in a Node 20 script, plain JavaScript:  node text-train.mjs [steps]
// The generated corpus (a small grammar, one id per character) is written as token shards, read
// back by textLoader() into i32 GPU batches, and trained on with GptTrainer on the same device.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { acquireGpu } from 'tandem';
import { GptTrainer, gptPresets } from 'tandem/gpt';
import { writeTokenShards } from 'tandem/sources';
import { textLoader } from 'tandem/text';
import { CORPUS_BOS, CORPUS_EOS, CORPUS_VOCAB_SIZE, corpusDocuments, corpusIds, corpusText } from 'tandem/train';

const steps = Number(process.argv[2] ?? 40);
const dir = await mkdtemp(join(tmpdir(), 'tandem-text-'));
// 1000 documents of 20 to 400 characters, as ids without BOS/EOS (the loader adds them).
const manifest = await writeTokenShards(
  corpusDocuments(1, 1000).map((text) => corpusIds(text)),
  { dir, vocabSize: CORPUS_VOCAB_SIZE, bytesPerToken: 2, tokensPerShard: 50_000 },
);
console.log(`wrote ${manifest.samples} documents, ${manifest.tokens} tokens in ${manifest.shards.length} shards`);

const gpu = await acquireGpu(); // Node: npm install webgpu
const config = gptPresets.tiny; // vocabulary 24, context 64, width 64, depth 2
const batchSize = 8;
const data = textLoader(
  { tokens: manifest.shards.map((s) => join(dir, s.name)) },
  { seqLen: config.context, batchSize, pack: 'best-fit', bos: CORPUS_BOS, eos: CORPUS_EOS, shuffle: true, epochs: 10, to: gpu },
);
const train = { lr: 1e-2, minLr: 3e-4, warmupSteps: 10, totalSteps: steps, weightDecay: 0.01 };
const gpt = await GptTrainer.create(gpu.device, { config, batchSize, train });
try {
  let step = 0;
  let first;
  for await (const batch of data) {
    // inputs, labels (−1: nothing to predict), docIds and positions: i32 [8, 64] GPU buffers.
    const encoder = gpu.device.createCommandEncoder();
    gpt.step(encoder, batch);
    gpu.device.queue.submit([encoder.finish()]);
    batch.release(); // the buffers may be refilled
    step++;
    if (step === 5) first = await gpt.readLoss(); // the mean of steps 1–5
    if (step === steps) break;
  }
  const last = await gpt.readLoss(); // the mean since step 5
  console.log(`shape [${batchSize}, ${config.context}]; ${step} steps; padding ${(100 * data.packing().paddingShare).toFixed(1)}%`);
  console.log(`loss before: ${first.loss.toFixed(3)} after: ${last.loss.toFixed(3)} (accuracy ${(100 * last.accuracy).toFixed(1)}%)`);
  const prompt = 'the cat';
  const ids = await gpt.complete([CORPUS_BOS, ...corpusIds(prompt)], 40);
  const end = ids.indexOf(CORPUS_EOS);
  console.log(`completion: ${JSON.stringify(prompt + corpusText(end < 0 ? ids : ids.slice(0, end)))}`);
  console.log(data.summary());
} finally {
  await data.close();
  gpt.close();
  gpu.close();
  await rm(dir, { recursive: true, force: true });
}
