import { describe, expect, it, test } from 'vitest';
import { PipelineBuilder } from '../../src/pipeline/index.ts';
import { scenarios } from '../shared/pipeline-scenarios.ts';
import { stoppedItemsAreDisposed, stopWhileBatchBuffersAreHeld } from '../shared/shutdown-scenarios.ts';

describe('pipeline scenarios', () => {
  for (const [name, body] of Object.entries(scenarios)) test(name, body, 20_000);
});

test('await using stops the pipeline at scope exit', async () => {
  let outer: { running: boolean; state: string } | undefined;
  {
    await using p = new PipelineBuilder()
      .addSource([1, 2, 3])
      .pipe(async (x: number) => x)
      .build();
    await p.next();
    expect(p.running).toBe(true);
    outer = p;
  }
  expect([outer.running, outer.state]).toEqual([false, 'stopped']);
});

describe('stopping while items hold resources', () => {
  it('every item made is delivered or disposed, at random stop points', async () => {
    await stoppedItemsAreDisposed();
  });
  it('stop() returns while the consumer holds every batch buffer', async () => {
    await stopWhileBatchBuffersAreHeld();
  });
});
