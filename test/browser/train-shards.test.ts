import { expect, it } from 'vitest';
import { TarWriter, type ShardManifest, type ShardOpener } from '../../src/sources/index.ts';
import { defaultTrainingOptions, runTraining, shardData, syntheticData } from '../../src/train/index.ts';

// The streaming path in the page: generated JPEGs written as WebDataset tar shards (in memory
// here; URLs in a deployment), streamed by ShardStream into the training session.
it('trains the ViT in Chromium from tar shards streamed one sample at a time', async () => {
  const { train, classes } = await syntheticData({ count: 48, heldOutEvery: 1_000_000 });
  const shards = new Map<string, Uint8Array>();
  const manifest: ShardManifest = { format: 'webdataset', classes: [...classes], samples: train.length, shards: [] };
  for (let s = 0; s < 3; s++) {
    const chunks: Uint8Array[] = [];
    const writer = new TarWriter((chunk) => void chunks.push(chunk.slice()));
    const mine = train.filter((_, i) => i % 3 === s);
    for (const [i, source] of mine.entries()) {
      await writer.add(`${String(i).padStart(6, '0')}.jpg`, await source.read());
      await writer.add(`${String(i).padStart(6, '0')}.cls`, new TextEncoder().encode(String(source.label)));
    }
    await writer.end();
    const name = `shard-${s}.tar`;
    shards.set(`mem:/${name}`, new Uint8Array(await new Blob(chunks as Uint8Array<ArrayBuffer>[]).arrayBuffer()));
    manifest.shards.push({ name, samples: mine.length, bytes: shards.get(`mem:/${name}`)!.length });
  }
  const opened: string[] = [];
  const open: ShardOpener = async (name) => {
    opened.push(name);
    const bytes = shards.get(name);
    if (!bytes) throw new Error(`no shard ${name}`);
    return new Blob([bytes as Uint8Array<ArrayBuffer>]).stream();
  };
  const data = shardData(manifest, 'mem:', { open, bufferSize: 8 });
  expect(data.stream?.count).toBe(48);
  const report = await runTraining(data, { ...defaultTrainingOptions, epochs: 2, batchSize: 8, threads: 2 });
  expect(report.steps).toBe(12);
  expect(report.failures).toBe(0);
  expect(report.cancelled).toBe(false);
  expect(report.epochs.every((e) => Number.isFinite(e.trainLoss))).toBe(true);
  expect(opened.length).toBe(6); // every shard once per epoch
});
