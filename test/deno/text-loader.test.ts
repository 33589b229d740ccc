// Deno tier: textLoader() on the CPU and on Deno's WebGPU, the same scenario bodies as Node.
import './limits.ts';
import { withTempDir } from '../shared/deno-serve.ts';
import {
  badTextIsTyped,
  deviceBatchesEqualCpu,
  jsonlLinesAreDocuments,
  packsLikeTheReference,
  regroupsForThreeRanks,
  tokenizesInWorkers,
  resumesExactly,
  llmcShardsSplitIntoDocuments,
  tokenShardsAcrossRanks,
} from '../shared/text-loader-scenarios.ts';

Deno.test('textLoader: concat packs { texts } exactly as the reference does', packsLikeTheReference);
for (const pack of ['concat', 'best-fit', 'pad'] as const)
  Deno.test(`textLoader: ${pack}, resumed from state() or after a break, the same batches`, () => resumesExactly(pack));
Deno.test('textLoader: bad documents fail typed under their keys; the rest is packed', badTextIsTyped);
Deno.test('textLoader: token shards across two ranks, every document once per epoch', () => withTempDir(tokenShardsAcrossRanks));
Deno.test('textLoader: llm.c shards split into their documents at tokenShards.documentStart', () =>
  withTempDir(llmcShardsSplitIntoDocuments));
Deno.test('textLoader(to: gpu): the i32 buffers read back equal the CPU batches', deviceBatchesEqualCpu);
Deno.test('textLoader: token shards, two ranks regrouped for three mid-epoch, every token delivered once', () =>
  withTempDir(regroupsForThreeRanks));
Deno.test('textLoader: @huggingface/tokenizers in two workers gives the corpus ids', tokenizesInWorkers);
Deno.test('textLoader: JSON Lines, a document per line keyed file#line, bad lines typed, resume and ranks per line', () =>
  withTempDir(jsonlLinesAreDocuments));
