// Resuming a sharded loader on a different number of ranks, in a Node 20 script (plain JavaScript).
// Run from a folder holding images/<class>/*.jpg:  node elastic-resume.mjs
// Here the ranks are loops in one process; in a real run each is its own process with RANK and
// WORLD_SIZE set, and each saves its position with its checkpoint.
import { regroupShardStates, writeFolderShards } from 'tandem/sources';
import { shardData } from 'tandem/train';

// The folder as WebDataset tar shards (what `tandem shards` writes), 2 samples per shard.
const manifest = await writeFolderShards('images', { out: 'shards', perShard: 2 });
const seed = 7;
const read = [];

// Two ranks each consume 2 samples of the epoch and save where they are.
const saved = [];
for (const rank of [0, 1]) {
  const stream = shardData(manifest, 'shards', { rank, worldSize: 2 }).stream.open(seed, 1);
  let consumed = 0;
  for await (const sample of stream) {
    read.push(sample.key);
    if (++consumed === 2) break;
  }
  saved.push(JSON.stringify(stream.stateAfter(consumed))); // plain JSON, kept with the checkpoint
}

// Three ranks finish the epoch from those positions.
const states = saved.map((text) => JSON.parse(text));
const shardSamples = manifest.shards.map((shard) => shard.samples);
const regrouped = regroupShardStates(states, 3, { shardSamples });
for (const [rank, state] of regrouped.entries()) {
  for await (const sample of shardData(manifest, 'shards', { rank, worldSize: 3 }).stream.open(seed, 1, state)) {
    await sample.read(); // the sample's image bytes
    read.push(sample.key);
  }
}
console.log(`2 ranks → 3: ${read.length} samples read, ${new Set(read).size} distinct, of ${manifest.samples}`);
