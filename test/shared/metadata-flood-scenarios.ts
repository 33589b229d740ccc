// Files that carry tens of thousands of metadata entries around valid media. libav keeps metadata
// and chapters in flat lists searched on every insert, appends to a repeated key by copying the
// whole value, and follows EXIF directories that point at each other, so before
// wasm/ffmpeg/metadata-bounds.patch such a file held a pool thread for a time quadratic (PNG, FLAC,
// Matroska chapters and cues), cubic (Matroska tags) or worse (EXIF) in its size: a 1.4 MB FLAC
// about a minute, a 560 KB WebM several minutes, a 24 KB WebP over a minute, with no way to stop
// the thread. Matroska tracks are a flat list too, walked for every cue and TrackPlane
// (wasm/ffmpeg/container-table-bounds.patch keeps the first 256).
// Each file below decodes to the same samples as the same media without the flood.
import type { DecodePool } from '../../src/decode/index.ts';
import { crc32, encodePng } from '../../src/synthetic/index.ts';
import { check } from './assert.ts';
import type { FixtureLoader } from './media-scenarios.ts';

/** Well past where the unpatched decoder took over a minute, yet quick to build and to read. */
const FLAC_COMMENTS = 120_000;
/** Each large enough that the module before the patch ran past its limit (20 s, or 60 s for images). */
const FLAC_REPEATED_COMMENTS = 300_000;
const EXIF_IFD_POINTERS = 2_000;
const PNG_TEXT_CHUNKS = 200_000;
const MKV_TAGS = 8_000;
const MKV_CHAPTERS = 300_000;
const MKV_CUES = 600_000;
const MKV_EMPTY_TRACKS = 100_000;
const MKV_TRACK_PLANES = 100_000;
const MKV_CUES_FOR_A_MISSING_TRACK = 100_000;
/** The flood must not be what ends a job: an unbounded decoder runs past this, a bounded one never. */
const TIME_LIMIT_MS = 20_000;

export const ascii = (text: string) => new TextEncoder().encode(text);
const concat = (parts: Uint8Array[]) => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
};

/**
 * The FLAC fixture with a VORBIS_COMMENT block of `count` comments after STREAMINFO: distinct
 * KEYn=v, or with `repeatKey` the same key every time.
 */
export function floodFlac(flac: Uint8Array, count: number, repeatKey = false): Uint8Array {
  if (String.fromCharCode(...flac.subarray(0, 4)) !== 'fLaC' || (flac[4]! & 0x7f) !== 0) throw new Error('flood: no STREAMINFO first');
  const comments = Array.from({ length: count }, (_, i) => ascii(repeatKey ? 'K=v' : `KEY${i}=v`));
  const body = new Uint8Array(8 + 4 + comments.reduce((n, c) => n + 4 + c.length, 0));
  const view = new DataView(body.buffer);
  view.setUint32(0, 4, true); // vendor string length, then "none"
  body.set(ascii('none'), 4);
  view.setUint32(8, count, true);
  let at = 12;
  for (const c of comments) {
    view.setUint32(at, c.length, true);
    body.set(c, at + 4);
    at += 4 + c.length;
  }
  if (body.length >= 2 ** 24) throw new Error('flood: comment block over 16 MiB');
  const wasLast = flac[4]! & 0x80;
  const header = Uint8Array.of(wasLast | 4, body.length >> 16, (body.length >> 8) & 0xff, body.length & 0xff);
  const out = concat([flac.subarray(0, 42), header, body, flac.subarray(42)]);
  out[4] = out[4]! & 0x7f; // STREAMINFO is no longer the last block
  return out;
}

/** A 4×4 RGB PNG with `count` tEXt chunks of distinct keywords between IHDR and IDAT. */
export function floodPng(pixels: Uint8Array, count: number): Uint8Array {
  const png = encodePng(pixels, 4, 4);
  const ihdrEnd = 8 + 12 + 13;
  const chunks = Array.from({ length: count }, (_, i) => {
    const data = ascii(`tEXtK${i}\0v`);
    const chunk = new Uint8Array(8 + data.length);
    const view = new DataView(chunk.buffer);
    view.setUint32(0, data.length - 4);
    chunk.set(data, 4);
    view.setUint32(4 + data.length, crc32(data));
    return chunk;
  });
  return concat([png.subarray(0, ihdrEnd), ...chunks, png.subarray(ihdrEnd)]);
}

/**
 * A lossless WebP (simple format, one VP8L chunk) rewritten in the extended format with an EXIF
 * chunk whose first directory holds `entries` pointers to itself (`entries` 0: no EXIF chunk).
 */
export function floodWebpExif(webp: Uint8Array, entries: number): Uint8Array {
  const riff = new DataView(webp.buffer, webp.byteOffset, webp.byteLength);
  if (String.fromCharCode(...webp.subarray(12, 16)) !== 'VP8L') throw new Error('flood: not a simple lossless WebP');
  const vp8lSize = riff.getUint32(16, true);
  const vp8l = webp.subarray(12, 20 + vp8lSize + (vp8lSize & 1));
  const size = riff.getUint32(21, true); // 14 bits width - 1, 14 bits height - 1
  const chunk = (fourcc: string, payload: Uint8Array) => {
    const out = new Uint8Array(8 + payload.length + (payload.length & 1));
    out.set(ascii(fourcc));
    new DataView(out.buffer).setUint32(4, payload.length, true);
    out.set(payload, 8);
    return out;
  };
  const vp8x = new Uint8Array(11); // 10 bytes, and one spare for the 32-bit writes below
  const header = new DataView(vp8x.buffer);
  vp8x[0] = entries > 0 ? 0x08 : 0; // the EXIF flag
  header.setUint32(4, size & 0x3fff, true); // canvas width - 1 (24 bits; the fourth byte is overwritten next)
  header.setUint32(7, (size >>> 14) & 0x3fff, true); // canvas height - 1 (24 bits, then one spare byte)
  const parts = [ascii('WEBP'), chunk('VP8X', vp8x.subarray(0, 10)), vp8l];
  if (entries > 0) {
    // Little-endian TIFF: the first directory at offset 8, each entry an Exif IFD pointer (0x8769,
    // LONG, count 1) back to offset 8.
    const tiff = new Uint8Array(8 + 2 + entries * 12 + 4);
    const t = new DataView(tiff.buffer);
    tiff.set(ascii('II*\0'));
    t.setUint32(4, 8, true);
    t.setUint16(8, entries, true);
    for (let i = 0; i < entries; i++) {
      const at = 10 + i * 12;
      t.setUint16(at, 0x8769, true);
      t.setUint16(at + 2, 4, true);
      t.setUint32(at + 4, 1, true);
      t.setUint32(at + 8, 8, true);
    }
    parts.push(chunk('EXIF', tiff));
  }
  const body = concat(parts);
  const out = concat([ascii('RIFF'), new Uint8Array(4), body]);
  new DataView(out.buffer).setUint32(4, body.length, true);
  return out;
}

/** An EBML element: its ID's bytes, its size (one byte when it fits, else eight), the payload. */
function ebml(id: number[], payload: Uint8Array): Uint8Array {
  if (payload.length < 0x7f) return concat([Uint8Array.from(id), Uint8Array.of(0x80 | payload.length), payload]);
  const size = new Uint8Array(8);
  size[0] = 1;
  new DataView(size.buffer).setUint32(4, payload.length);
  return concat([Uint8Array.from(id), size, payload]);
}
/** `count` elements of one size, `element(i)` for each, written in place rather than concatenated. */
export function sameSizeElements(count: number, element: (i: number) => Uint8Array): Uint8Array {
  const size = element(0).length;
  const out = new Uint8Array(count * size);
  for (let i = 0; i < count; i++) out.set(element(i), i * size);
  return out;
}
/** An unsigned integer payload of three bytes. */
const uint24 = (value: number) => Uint8Array.of(value >> 16, (value >> 8) & 0xff, value & 0xff);

/**
 * The WebM fixture's EBML header, Info, Tracks and first Cluster in a fresh Segment (no SeekHead,
 * no Cues: read in order), with `extra` (whole level-1 elements) before the Cluster, and the
 * Tracks element's payload passed through `tracks`.
 */
export function rewrapWebm(webm: Uint8Array, extra: Uint8Array, tracks = (payload: Uint8Array) => payload): Uint8Array {
  const elements = topLevel(webm);
  const header = elements.find((e) => e.id === 0x1a45dfa3);
  const segment = elements.find((e) => e.id === 0x18538067);
  if (!header || !segment) throw new Error('flood: not a Matroska file');
  const inner = topLevel(webm, segment.payload, segment.end);
  const pick = (id: number) => {
    const e = inner.find((x) => x.id === id);
    if (!e) throw new Error(`flood: no element 0x${id.toString(16)}`);
    return webm.subarray(e.start, e.end);
  };
  const trackList = inner.find((x) => x.id === 0x1654ae6b);
  if (!trackList) throw new Error('flood: no Tracks element');
  const trackPayload = tracks(webm.subarray(trackList.payload, trackList.end));
  const body = concat([pick(0x1549a966), ebml([0x16, 0x54, 0xae, 0x6b], trackPayload), extra, pick(0x1f43b675)]);
  return concat([webm.subarray(header.start, header.end), ebml([0x18, 0x53, 0x80, 0x67], body)]);
}

/** The WebM fixture with `count` Tag elements of distinct names (`count` 0: no Tags element). */
export function floodWebm(webm: Uint8Array, count: number): Uint8Array {
  if (count === 0) return rewrapWebm(webm, new Uint8Array(0));
  // Tags without a target describe the whole file: each one is converted into its metadata.
  const simpleTag = (i: number) => ebml([0x67, 0xc8], concat([ebml([0x45, 0xa3], ascii(`K${i}`)), ebml([0x44, 0x87], ascii('v'))]));
  const tags = Array.from({ length: count }, (_, i) => ebml([0x73, 0x73], simpleTag(i)));
  return rewrapWebm(webm, ebml([0x12, 0x54, 0xc3, 0x67], concat(tags)));
}

/**
 * The WebM fixture with one edition of `count` chapters whose start times rise while their UIDs
 * fall: every chapter after the first has an ID out of order, which libav answered by searching
 * all the chapters before it.
 */
export function floodWebmChapters(webm: Uint8Array, count: number): Uint8Array {
  const atom = (i: number) => ebml([0xb6], concat([ebml([0x73, 0xc4], uint24(count - i)), ebml([0x91], uint24(i + 1))]));
  return rewrapWebm(webm, ebml([0x10, 0x43, 0xa7, 0x70], ebml([0x45, 0xb9], sameSizeElements(count, atom))));
}

/**
 * The WebM fixture with a Cues element of `count` cue points for track 1 whose times fall: each one
 * went in at the front of libav's index, moving every entry already there.
 */
export function floodWebmCues(webm: Uint8Array, count: number): Uint8Array {
  const position = ebml([0xb7], concat([ebml([0xf7], Uint8Array.of(1)), ebml([0xf1], Uint8Array.of(0))]));
  const cue = (i: number) => ebml([0xbb], concat([ebml([0xb3], uint24(count - i)), position]));
  return rewrapWebm(webm, ebml([0x1c, 0x53, 0xbb, 0x6b], sameSizeElements(count, cue)));
}

/**
 * The WebM fixture with `emptyTracks` TrackEntry elements after its own (2 bytes each: no codec,
 * no stream), `planes` TrackPlane elements in its video track naming no track, and `cues` cue
 * points for a track number no track has: libav found a track by walking the whole list, for
 * every plane and every cue.
 */
export function floodWebmTracks(webm: Uint8Array, emptyTracks: number, planes: number, cues: number): Uint8Array {
  const plane = ebml([0xe4], concat([ebml([0xe5], Uint8Array.of(0x7f, 0xff, 0xff, 0xff)), ebml([0xe6], Uint8Array.of(0))]));
  const operation = ebml(
    [0xe2],
    ebml(
      [0xe3],
      sameSizeElements(planes, () => plane),
    ),
  );
  const position = ebml([0xb7], concat([ebml([0xf7], Uint8Array.of(0x7f, 0xff)), ebml([0xf1], Uint8Array.of(0))]));
  const cue = (i: number) => ebml([0xbb], concat([ebml([0xb3], uint24(i + 1)), position]));
  const withTracks = (payload: Uint8Array) => {
    const [video, ...others] = topLevel(payload);
    if (!video) throw new Error('flood: no TrackEntry');
    const entry = ebml([0xae], concat([payload.subarray(video.payload, video.end), operation]));
    const rest = others.map((e) => payload.subarray(e.start, e.end));
    return concat([entry, ...rest, sameSizeElements(emptyTracks, () => Uint8Array.of(0xae, 0x80))]);
  };
  return rewrapWebm(webm, ebml([0x1c, 0x53, 0xbb, 0x6b], sameSizeElements(cues, cue)), withTracks);
}

interface Element {
  id: number;
  start: number;
  payload: number;
  end: number;
}
/** The elements from `from` to `to`, one level (IDs keep their length marker, as the spec writes them). */
function topLevel(b: Uint8Array, from = 0, to = b.length): Element[] {
  const vint = (at: number, keepMarker: boolean) => {
    const first = b[at]!;
    let length = 1;
    while (length <= 8 && !(first & (0x80 >> (length - 1)))) length++;
    let value = keepMarker ? first : first & ((0x80 >> (length - 1)) - 1);
    for (let i = 1; i < length; i++) value = value * 256 + b[at + i]!;
    return { value, length };
  };
  const out: Element[] = [];
  for (let at = from; at < to; ) {
    const id = vint(at, true);
    const size = vint(at + id.length, false);
    const payload = at + id.length + size.length;
    out.push({ id: id.value, start: at, payload, end: payload + size.value });
    at = payload + size.value;
  }
  return out;
}

export const same = (a: Uint8Array, b: Uint8Array) => a.length === b.length && a.every((v, i) => v === b[i]);

type PoolBuffer = ReturnType<DecodePool['allocate']>;
/** Runs `decode` into a fresh pool buffer of `size` bytes: the frames it wrote and a copy of the buffer. */
export async function decodedCopy(
  pool: DecodePool,
  size: number,
  decode: (buffer: PoolBuffer) => Promise<{ framesWritten: number } | undefined>,
): Promise<{ frames: number; bytes: Uint8Array }> {
  const buffer = pool.allocate(size);
  try {
    const info = await decode(buffer);
    return { frames: info?.framesWritten ?? 0, bytes: buffer.bytes.slice() };
  } finally {
    buffer.free();
  }
}

/**
 * Each flooded file decodes, within the time limit, to the same bytes as the same media without
 * the flood; with the flood left in an unbounded decoder the audio and video jobs fail as
 * over-budget and the image job runs past the test's timeout.
 */
export async function metadataFloodsDecodeLikeTheMedia(pool: DecodePool, load: FixtureLoader): Promise<void> {
  const flac = await load('sine440.flac');
  const audio = { sampleRate: 16000, channels: 1, maxFrames: 4096, timeLimitMs: TIME_LIMIT_MS };
  const audioOf = (bytes: Uint8Array) => decodedCopy(pool, audio.maxFrames * 4, (buffer) => pool.decodeAudio(bytes, buffer, audio));
  const plainAudio = await audioOf(flac);
  const floodedAudio = await audioOf(floodFlac(flac, FLAC_COMMENTS));
  check(plainAudio.frames === audio.maxFrames, `the FLAC fixture gave ${plainAudio.frames} frames`);
  check(
    floodedAudio.frames === plainAudio.frames && same(floodedAudio.bytes, plainAudio.bytes),
    'a FLAC with 120k comments decodes like the fixture',
  );
  const repeatedAudio = await audioOf(floodFlac(flac, FLAC_REPEATED_COMMENTS, true));
  check(
    repeatedAudio.frames === plainAudio.frames && same(repeatedAudio.bytes, plainAudio.bytes),
    'a FLAC with 300k comments of one key decodes like the fixture',
  );

  const pixels = Uint8Array.from({ length: 4 * 4 * 3 }, (_, i) => (i * 37) % 256);
  const imageOf = async (bytes: Uint8Array, side = 4) =>
    (await decodedCopy(pool, side * side * 3, async (buffer) => void (await pool.decodeInto(bytes, buffer, { width: side, height: side }))))
      .bytes;
  check(same(await imageOf(floodPng(pixels, 0)), pixels), 'the plain PNG decodes to its pixels');
  check(same(await imageOf(floodPng(pixels, PNG_TEXT_CHUNKS)), pixels), 'a PNG with 200k tEXt chunks decodes to its pixels');

  const webp = await load('lossless.webp');
  const webpOf = (bytes: Uint8Array) => imageOf(bytes, 16);
  const plainWebp = await webpOf(floodWebpExif(webp, 0));
  check(
    plainWebp.some((v) => v !== 0) && same(plainWebp, await webpOf(webp)),
    'the WebP re-wrapped in the extended format decodes like the fixture',
  );
  check(
    same(await webpOf(floodWebpExif(webp, EXIF_IFD_POINTERS)), plainWebp),
    `a WebP whose EXIF directory points at itself ${EXIF_IFD_POINTERS} times decodes like the same WebP without EXIF`,
  );

  const webm = await load('testsrc.vp9.webm');
  const video = { width: 32, height: 24, frames: { indices: [0, 1] }, timeLimitMs: TIME_LIMIT_MS };
  const videoOf = (bytes: Uint8Array) => decodedCopy(pool, 2 * 32 * 24 * 3, (buffer) => pool.decodeVideo(bytes, buffer, video));
  const plainVideo = await videoOf(floodWebm(webm, 0));
  const floodedVideo = await videoOf(floodWebm(webm, MKV_TAGS));
  check(plainVideo.frames === 2 && plainVideo.bytes.some((v) => v !== 0), `the re-wrapped WebM gave ${plainVideo.frames} frames`);
  check(
    floodedVideo.frames === 2 && same(floodedVideo.bytes, plainVideo.bytes),
    'a WebM with 8000 tags decodes like the same WebM without them',
  );
  const cuedVideo = await videoOf(floodWebmCues(webm, MKV_CUES));
  check(
    cuedVideo.frames === 2 && same(cuedVideo.bytes, plainVideo.bytes),
    `a WebM with ${MKV_CUES} cues in falling time order decodes like the same WebM without them`,
  );
  const chapteredVideo = await videoOf(floodWebmChapters(webm, MKV_CHAPTERS));
  check(
    chapteredVideo.frames === 2 && same(chapteredVideo.bytes, plainVideo.bytes),
    `a WebM with ${MKV_CHAPTERS} chapters out of order decodes like the same WebM without them`,
  );
  const trackedVideo = await videoOf(floodWebmTracks(webm, MKV_EMPTY_TRACKS, MKV_TRACK_PLANES, MKV_CUES_FOR_A_MISSING_TRACK));
  check(
    trackedVideo.frames === 2 && same(trackedVideo.bytes, plainVideo.bytes),
    `a WebM with ${MKV_EMPTY_TRACKS} empty tracks, ${MKV_TRACK_PLANES} track planes and ${MKV_CUES_FOR_A_MISSING_TRACK} cues for a missing track decodes like the same WebM without them`,
  );
}
