// Elastic resumption for shard sources: the states of all ranks of a text loader become states for
// a new number of ranks that together deliver every token the old ranks had not, exactly once. The
// shard streams are regrouped from where each packer had read to (`after`), and the documents the
// packers still held (whole or in part) are dealt out as carried pieces, read back by key.
import { OptionError } from '../errors/index.ts';
import { regroupShardStates, type RegroupOptions } from '../sources/index.ts';
import type { TextLoaderState } from './state.ts';

export function regroupTextStates(states: readonly TextLoaderState[], worldSize: number, options: RegroupOptions = {}): TextLoaderState[] {
  const where = 'regroupTextStates';
  if (!Number.isInteger(worldSize) || worldSize < 1) throw new OptionError(where, 'worldSize', worldSize, 'a positive integer');
  const first = states[0];
  if (first === undefined) throw new OptionError(where, 'states', states, 'the states of every rank');
  const shardStates = states.map((s, i) => {
    const after = s.after?.shards;
    if (s.kind !== 'tandem.text' || after === undefined)
      throw new OptionError(where, `states[${i}]`, s, "a text loader's state over token or text shards (state() after a batch)");
    if (JSON.stringify(s.packing) !== JSON.stringify(first.packing))
      throw new OptionError(where, `states[${i}].packing`, s.packing, `the packing of states[0] (${JSON.stringify(first.packing)})`);
    return after;
  });
  const regrouped = regroupShardStates(shardStates, worldSize, options);
  const carried: Array<[string, number]> = states.flatMap((s) => [
    ...(s.carry ?? []),
    ...s.packer.pending.map(([, start, key]): [string, number] => [key, start]),
  ]);
  const dealt = regrouped.map((): Array<[string, number]> => []);
  for (const [i, piece] of carried.entries()) dealt[i % worldSize]?.push(piece);
  return regrouped.map((shards, c) => ({
    kind: 'tandem.text',
    version: 1,
    docs: { kind: 'tandem.loader', version: 1, shards },
    packer: { next: 0, pending: [] },
    ...((dealt[c]?.length ?? 0) > 0 ? { carry: dealt[c] } : {}),
    packing: first.packing,
  }));
}
