// SharedClipDecode on its own: the members of one decode each get the frames they would get
// decoded alone; a shared job that fails leaves each member to decode alone, so a member with a
// bad request fails by itself and its neighbour still gets its frames; close() frees the staging
// block, at once or after a running job stops writing into it, and later fills fail typed.
import { describe, expect, it } from 'vitest';
import { DecodeError, memoryByteSource, SharedClipDecode, type VideoPackets } from '../../src/decode/index.ts';
import { decodeClipInto } from '../../src/decode/internal.ts';
import { readClipPackets, readMp4Index } from '../../src/video/index.ts';
import { sharingGroups } from '../../src/video/clip-packets.ts';
import { loadFixture } from '../shared/node-fixtures.ts';
import { usePool } from '../shared/use-pool.ts';

const SIZE = { width: 24, height: 16, channels: 3 as const };
const FRAMES = 3;
const CLIP_BYTES = FRAMES * SIZE.width * SIZE.height * 3;

/** testsrc.h264.mp4: 20 frames at 10 fps, a keyframe every 5. Members' own frame times. */
const MEMBERS = [
  [0.6, 0.7, 0.8],
  [0.7, 0.8, 0.9],
];

async function packetsFor(members: number[][]): Promise<VideoPackets> {
  const bytes = await loadFixture('testsrc.h264.mp4');
  const index = await readMp4Index(memoryByteSource(bytes));
  if (!index) throw new Error('no index');
  return (await readClipPackets(memoryByteSource(bytes), index, members.flat())).packets;
}

describe('SharedClipDecode', () => {
  const pool = usePool({ threads: 2 });

  it('groups the clips whose runs overlap, and no others', async () => {
    const bytes = await loadFixture('testsrc.h264.mp4');
    const index = await readMp4Index(memoryByteSource(bytes));
    if (!index) throw new Error('no index');
    // Keyframes at 0, 0.5, 1.0, 1.5 s: [0.6–0.8] and [0.7–0.9] share the GOP at 0.5; [1.6–1.8] is on its own.
    expect(sharingGroups(index, [...MEMBERS, [1.6, 1.7, 1.8]], 8)).toEqual([[0, 1], [2]]);
    expect(sharingGroups(index, MEMBERS, 1)).toEqual([[0], [1]]);
  });

  it('gives each member the frames of its decode alone, in one job', async () => {
    const p = pool();
    const packets = await packetsFor(MEMBERS);
    const completed = p.stats().completed;
    const shared = new SharedClipDecode(p, packets, MEMBERS);
    const targets = [p.malloc(CLIP_BYTES), p.malloc(CLIP_BYTES), p.malloc(CLIP_BYTES)];
    try {
      const infos = await Promise.all(
        MEMBERS.map((_, m) => decodeClipInto(p, shared.clip(m), targets[m] ?? 0, { ...SIZE, frames: { frameTimes: [] } })),
      );
      expect(p.stats().completed - completed).toBe(1);
      for (const [m, times] of MEMBERS.entries()) {
        const alone = await p.decodeVideo(packets, targets[2] ?? 0, { ...SIZE, frames: { frameTimes: times } });
        const memory = new Uint8Array(p.memory.buffer);
        const got = memory.slice(targets[m], (targets[m] ?? 0) + CLIP_BYTES);
        expect(got).toEqual(memory.slice(targets[2], (targets[2] ?? 0) + CLIP_BYTES));
        expect(Array.from(infos[m]?.timestamps ?? [])).toEqual(Array.from(alone.timestamps));
        expect(infos[m]?.framesWritten).toBe(FRAMES);
      }
    } finally {
      for (const t of targets) p.free(t);
    }
  });

  it('a member with a bad request fails alone; the other still gets its frames; nothing is left allocated', async () => {
    const p = pool();
    const packets = await packetsFor(MEMBERS);
    const round = async () => {
      const shared = new SharedClipDecode(p, packets, [MEMBERS[0] ?? [], [0.7, -1, 0.9]]);
      const targets = [p.malloc(CLIP_BYTES), p.malloc(CLIP_BYTES)];
      try {
        const [good, bad] = await Promise.allSettled([0, 1].map((m) => shared.decodeInto(m, targets[m] ?? 0, SIZE)));
        expect(good?.status === 'fulfilled' && good.value.framesWritten).toBe(FRAMES);
        expect(bad?.status === 'rejected' && bad.reason instanceof DecodeError && bad.reason.code).toBe('bad-request');
      } finally {
        for (const t of targets) p.free(t);
      }
      return p.stats().heapBytes;
    };
    // The pool keeps its job records' side blocks for the next job: the second round holds no more.
    const first = await round();
    expect(await round()).toBe(first);
  });

  it('close() while the job runs frees the staging once it stops; later fills fail as closed', async () => {
    const p = pool();
    const packets = await packetsFor(MEMBERS);
    const heap = p.stats().heapBytes;
    const shared = new SharedClipDecode(p, packets, MEMBERS);
    const target = p.malloc(CLIP_BYTES);
    try {
      const first = shared.decodeInto(0, target, SIZE);
      shared.close();
      await expect(first).rejects.toMatchObject({ code: 'closed' });
      await expect(shared.decodeInto(1, target, SIZE)).rejects.toMatchObject({ code: 'closed' });
    } finally {
      p.free(target);
    }
    expect(p.stats().heapBytes).toBe(heap);
  });

  it('refuses members of unequal length and members decoded with other options', async () => {
    const p = pool();
    const packets = await packetsFor(MEMBERS);
    expect(() => new SharedClipDecode(p, packets, [[0.6], [0.7, 0.8]])).toThrow(DecodeError);
    await expect(new SharedClipDecode(p, packets, MEMBERS).decodeInto(2, 0, SIZE)).rejects.toMatchObject({ code: 'bad-request' });
    const shared = new SharedClipDecode(p, packets, MEMBERS);
    const target = p.malloc(CLIP_BYTES * 2);
    try {
      await shared.decodeInto(0, target, SIZE);
      await expect(shared.decodeInto(1, target, { ...SIZE, width: 12 })).rejects.toMatchObject({ code: 'bad-request' });
    } finally {
      p.free(target);
    }
  });
});
