// MP4 files whose sample tables make libav's mov demuxer do work quadratic in the file while it
// reads no input, so no deadline could stop it (wasm/ffmpeg/container-table-bounds.patch):
// - an edit list of thousands of edits, each of which searched the track's whole index (20,000
//   edits in 269 KB: 31 s in Debian's ffmpeg);
// - a 'chap' reference repeated thousands of times, each of which read the chapter track again
//   (20,000 references to a track of 100,000 samples, 109 KB: about 40 s in Debian's ffmpeg);
// - a one-size 'stsz' box claiming a million samples in 20 bytes.
// Each flooded file decodes to the same frames as the fixture it was made from.
import type { DecodePool } from '../../src/decode/index.ts';
import { check } from './assert.ts';
import type { FixtureLoader } from './media-scenarios.ts';
import { ascii, decodedCopy, same } from './metadata-flood-scenarios.ts';

const EDITS = 20_000;
const CHAPTER_REFERENCES = 20_000;
const CLAIMED_SAMPLES = 1_000_000;
const CHAPTER_TRACK_SAMPLES = 100_000;
/** The flood must not be what ends a job: an unbounded demuxer runs past this, a bounded one never. */
const TIME_LIMIT_MS = 20_000;

type Box = { type: string; body: Uint8Array | Box[] };
const CONTAINERS = new Set(['moov', 'trak', 'mdia', 'minf', 'stbl', 'edts', 'tref']);

function parseBoxes(bytes: Uint8Array): Box[] {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const boxes: Box[] = [];
  for (let at = 0; at < bytes.length; ) {
    const size = view.getUint32(at);
    if (size < 8 || at + size > bytes.length) throw new Error(`flood: box of ${size} bytes at ${at} (64-bit sizes are not handled)`);
    const type = String.fromCharCode(...bytes.subarray(at + 4, at + 8));
    const body = bytes.subarray(at + 8, at + size);
    boxes.push({ type, body: CONTAINERS.has(type) ? parseBoxes(body) : body });
    at += size;
  }
  return boxes;
}
function boxSize(box: Box): number {
  return 8 + (box.body instanceof Uint8Array ? box.body.length : box.body.reduce((n, b) => n + boxSize(b), 0));
}
function writeBoxes(boxes: Box[], out: Uint8Array, at = 0): number {
  const view = new DataView(out.buffer, out.byteOffset, out.byteLength);
  for (const box of boxes) {
    view.setUint32(at, boxSize(box));
    out.set(ascii(box.type), at + 4);
    if (box.body instanceof Uint8Array) out.set(box.body, at + 8);
    else writeBoxes(box.body, out, at + 8);
    at += boxSize(box);
  }
  return at;
}
const children = (box: Box | undefined): Box[] => {
  if (!box || box.body instanceof Uint8Array) throw new Error('flood: not a container box');
  return box.body;
};
const child = (boxes: Box[], ...path: string[]): Box => {
  let box: Box | undefined;
  for (const type of path) {
    box = (box ? children(box) : boxes).find((b) => b.type === type);
    if (!box) throw new Error(`flood: no ${path.join('/')} box`);
  }
  return box as Box;
};
const leaf = (box: Box): Uint8Array => {
  if (!(box.body instanceof Uint8Array)) throw new Error(`flood: ${box.type} is a container`);
  return box.body;
};
/** A full box's body: version 0, no flags, then the 32-bit words. */
const words = (...values: number[]) => {
  const body = new Uint8Array(4 + values.length * 4);
  const view = new DataView(body.buffer);
  for (const [i, v] of values.entries()) view.setUint32(4 + i * 4, v >>> 0);
  return body;
};
const deepCopy = (box: Box): Box => ({ type: box.type, body: box.body instanceof Uint8Array ? box.body.slice() : box.body.map(deepCopy) });

export interface Mp4Flood {
  /** Edits in the chapter track's edit list, each one starting near its end (0: no edit list). */
  edits: number;
  /** References from the video track to the chapter track. */
  chapterReferences: number;
  /** Samples the chapter track's one-size 'stsz' claims. */
  samples: number;
}

/**
 * The MP4 fixture (moov after mdat, so no chunk offset moves) with a second track that the video
 * track names as its chapter track: a data track of `samples` one-byte samples in one chunk at
 * the start of the media data, with `edits` edits and a 'chap' reference repeated
 * `chapterReferences` times. libav discards chapter tracks, so the video decodes as before.
 */
export function floodMp4(mp4: Uint8Array, flood: Mp4Flood): Uint8Array {
  const top = parseBoxes(mp4);
  if (top.findIndex((b) => b.type === 'moov') < top.findIndex((b) => b.type === 'mdat')) throw new Error('flood: moov before mdat');
  const moov = children(child(top, 'moov'));
  const video = child(moov, 'trak');
  const chapters = deepCopy(video);
  const tkhd = leaf(child(children(chapters), 'tkhd'));
  new DataView(tkhd.buffer, tkhd.byteOffset).setUint32(12, 2); // track ID 2 (version 0 layout)
  const hdlr = leaf(child(children(chapters), 'mdia', 'hdlr'));
  hdlr.set(ascii('meta'), 8); // not video or sound: a data track
  const stbl = children(child(children(chapters), 'mdia', 'minf', 'stbl'));
  const stsd = leaf(child(stbl, 'stsd'));
  stsd.set(ascii('tdnm'), 12); // a sample format no decoder claims
  const stco = leaf(child(stbl, 'stco'));
  const firstChunk = new DataView(stco.buffer, stco.byteOffset).getUint32(8);
  const table: Record<string, Uint8Array> = {
    stsd,
    stts: words(1, flood.samples, 1),
    ctts: words(1, flood.samples, 0),
    stsc: words(1, 1, flood.samples, 1),
    stsz: words(1, flood.samples),
    stco: words(1, firstChunk),
  };
  stbl.splice(0, stbl.length, ...Object.entries(table).map(([type, body]) => ({ type, body })));
  const trak = children(chapters).filter((b) => b.type !== 'edts');
  if (flood.edits > 0) {
    const elst = new Uint8Array(8 + flood.edits * 12);
    const view = new DataView(elst.buffer);
    view.setUint32(4, flood.edits);
    for (let i = 0; i < flood.edits; i++) {
      view.setUint32(8 + i * 12, 1); // duration
      view.setInt32(12 + i * 12, flood.samples - 2); // media time: near the end
      view.setUint32(16 + i * 12, 0x10000); // rate 1.0
    }
    trak.splice(1, 0, { type: 'edts', body: [{ type: 'elst', body: elst }] });
  }
  chapters.body = trak;
  const chap = new Uint8Array(4 * flood.chapterReferences);
  for (let i = 0; i < flood.chapterReferences; i++) new DataView(chap.buffer).setUint32(i * 4, 2);
  children(video).splice(1, 0, { type: 'tref', body: [{ type: 'chap', body: chap }] });
  moov.splice(moov.indexOf(video) + 1, 0, chapters);
  const out = new Uint8Array(top.reduce((n, b) => n + boxSize(b), 0));
  writeBoxes(top, out);
  return out;
}

/**
 * Each flooded MP4 decodes, within the time limit, to the same frames as the fixture; an unbounded
 * demuxer holds the thread for minutes (it reads nothing meanwhile, so the job cannot end sooner).
 */
export async function sampleTableFloodsDecodeLikeTheMedia(pool: DecodePool, load: FixtureLoader): Promise<void> {
  const mp4 = await load('testsrc.h264.mp4');
  const video = { width: 32, height: 24, frames: { indices: [0, 5, 19] }, timeLimitMs: TIME_LIMIT_MS };
  const videoOf = (bytes: Uint8Array) => decodedCopy(pool, 3 * 32 * 24 * 3, (buffer) => pool.decodeVideo(bytes, buffer, video));
  const plain = await videoOf(mp4);
  check(plain.frames === 3 && plain.bytes.some((v) => v !== 0), `the MP4 fixture gave ${plain.frames} frames`);
  const cases: [string, Mp4Flood][] = [
    ['one chapter track', { edits: 1, chapterReferences: 1, samples: 1000 }],
    [`${EDITS} edits over ${CLAIMED_SAMPLES} claimed samples`, { edits: EDITS, chapterReferences: 1, samples: CLAIMED_SAMPLES }],
    [
      `${CHAPTER_REFERENCES} references to one chapter track`,
      { edits: 0, chapterReferences: CHAPTER_REFERENCES, samples: CHAPTER_TRACK_SAMPLES },
    ],
  ];
  for (const [what, flood] of cases) {
    const flooded = await videoOf(floodMp4(mp4, flood));
    check(flooded.frames === 3 && same(flooded.bytes, plain.bytes), `an MP4 with ${what} decodes like the fixture`);
  }
}
