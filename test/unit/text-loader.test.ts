import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, it } from 'vitest';
import {
  badTextIsTyped,
  packsLikeTheReference,
  resumesExactly,
  tensorsEqualCpu,
  textShardsAndFolders,
  tokenizesInWorkers,
  llmcShardsSplitIntoDocuments,
  tokenShardsAcrossRanks,
} from '../shared/text-loader-scenarios.ts';

const dir = mkdtempSync(join(tmpdir(), 'tandem-text-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('textLoader on the CPU', () => {
  it('concat packs { texts } exactly as the reference does', packsLikeTheReference);
  for (const pack of ['concat', 'best-fit', 'pad'] as const)
    it(`${pack}: resumed from state() or after a break, the same batches`, () => resumesExactly(pack));
  it('bad UTF-8, an oversized document and JSON without its text field fail typed under their keys; the rest is packed', badTextIsTyped);
  it('a state from a loader with another pack, seqLen or tokenizer.json is refused by name', async () => {
    const { aStateOfAnotherLoaderIsRefused } = await import('../shared/text-loader-scenarios.ts');
    await aStateOfAnotherLoaderIsRefused();
  });
  it('@huggingface/tokenizers in two workers gives the corpus ids, BOS and EOS added, in order', tokenizesInWorkers);
  it('to: tf gives int32 tensors equal to the CPU batch, disposed by release()', tensorsEqualCpu);
  it('token shards across two ranks: every document once per epoch, its ids as written', () => tokenShardsAcrossRanks(dir));
  it('llm.c shards split into their documents at tokenShards.documentStart', () => llmcShardsSplitIntoDocuments(dir));
});

it('token shards: two ranks stopped mid-epoch, regrouped for three, every token delivered once', async () => {
  const { regroupsForThreeRanks } = await import('../shared/text-loader-scenarios.ts');
  await regroupsForThreeRanks(join(dir, 'regroup'));
});

describe('regrouping text states: shrink, grow, twice, in every packing (every token once)', () => {
  for (const pack of ['concat', 'pad', 'best-fit'] as const)
    for (const sizes of [
      [2, 1],
      [2, 3],
      [3, 2, 4],
    ])
      it(`${pack}: ${sizes.join(' → ')} ranks`, async () => {
        const { regroupsAlong } = await import('../shared/text-loader-scenarios.ts');
        await regroupsAlong(join(dir, `regroup-${pack}-${sizes.join('-')}`), pack, sizes);
      });
});

it('text shards and a folder of text files give the ids { texts } gives; a sample without text fails no-text', () =>
  textShardsAndFolders(join(dir, 'sources')));

it('JSON Lines: a document per line keyed file#line (folder, path list), bad lines typed under their keys, resume and ranks per line', async () => {
  const { jsonlLinesAreDocuments } = await import('../shared/text-loader-scenarios.ts');
  await jsonlLinesAreDocuments(join(dir, 'jsonl'));
});

it('close() while the first pass is opening ends it with no batch, failure or error', async () => {
  const { closedWhileOpening } = await import('../shared/text-loader-scenarios.ts');
  await closedWhileOpening();
});
