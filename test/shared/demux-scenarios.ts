// Runtime-neutral bodies of the demux tests (DecodePool.demuxVideo), each throwing on failure. The
// reference is ffprobe's view of the same fixtures: <video>.packets.json, made by
// scripts/make-demux-reference.sh (pts, dts, duration, size, flags and CRC-32 of every packet).
import { DecodeError, type DecodeErrorCode, type DecodePool, type DemuxedVideo, memoryByteSource } from '../../src/decode/index.ts';
import { check, rejectsWith } from './assert.ts';

export type FixtureLoader = (name: string) => Promise<Uint8Array>;

export const DEMUX_VIDEOS = ['testsrc.h264.mp4', 'testsrc.vp9.webm', 'testsrc.h264.mkv'] as const;
/** WebCodecs codec strings: x264's High profile (0x64) at level 1.0 (0x0A); VP9 profile 0, 8 bits, no level in WebM. */
export const CODEC_STRINGS: Record<(typeof DEMUX_VIDEOS)[number], string> = {
  'testsrc.h264.mp4': 'avc1.64000A',
  'testsrc.vp9.webm': 'vp09.00.10.08',
  'testsrc.h264.mkv': 'avc1.64000A',
};

interface ProbePacket {
  pts?: number;
  dts?: number;
  duration?: number;
  size: string;
  flags: string;
  data_hash: string;
}
interface Probe {
  packets: ProbePacket[];
  streams: [{ start_pts?: number; time_base: string; has_b_frames: number; extradata_hash?: string }];
}

async function probe(load: FixtureLoader, name: string): Promise<Probe> {
  return JSON.parse(new TextDecoder().decode(await load(`${name}.packets.json`))) as Probe;
}

const CRC_TABLE = Uint32Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});
/** CRC-32 (IEEE, as ffprobe's -show_data_hash CRC32 writes it). */
export function crc32(bytes: Uint8Array): string {
  let c = 0xffffffff;
  for (const b of bytes) c = CRC_TABLE[(c ^ b) & 0xff]! ^ (c >>> 8);
  return `CRC32:${((c ^ 0xffffffff) >>> 0).toString(16).padStart(8, '0')}`;
}

/** ffprobe's timestamp in µs from the stream's start; NaN where it has none. */
function us(ts: number | undefined, start: number, timeBase: string): number {
  if (ts === undefined) return Number.NaN;
  const [num, den] = timeBase.split('/').map(Number) as [number, number];
  return ((ts - start) * num * 1e6) / den;
}

const near = (a: number, b: number) => (Number.isNaN(a) && Number.isNaN(b)) || Math.abs(a - b) <= 1;

/** Packet i of `d` against ffprobe's packet j: times within 1 µs, key flag, size and (with bytes) CRC. */
function checkPacket(d: DemuxedVideo, i: number, p: ProbePacket, ref: Probe, what: string): void {
  const { start_pts: start = 0, time_base: tb } = ref.streams[0];
  const pts = p.pts ?? p.dts; // demuxVideo shows a packet without a pts at its dts
  check(near(d.ptsUs[i]!, us(pts, start, tb)), `${what}: packet ${i} pts ${d.ptsUs[i]} µs, ffprobe ${us(pts, start, tb)}`);
  check(near(d.dtsUs[i]!, us(p.dts, start, tb)), `${what}: packet ${i} dts ${d.dtsUs[i]} µs, ffprobe ${us(p.dts, start, tb)}`);
  check(near(d.durationUs[i]!, us(p.duration ?? 0, 0, tb)), `${what}: packet ${i} duration ${d.durationUs[i]} µs`);
  check(d.key[i] === (p.flags.startsWith('K') ? 1 : 0), `${what}: packet ${i} key flag ${d.key[i]}, ffprobe ${p.flags}`);
  check(d.size[i] === Number(p.size), `${what}: packet ${i} size ${d.size[i]}, ffprobe ${p.size}`);
  if (d.data.length > 0) {
    const bytes = d.data.subarray(d.offset[i]!, d.offset[i]! + d.size[i]!);
    check(crc32(bytes) === p.data_hash, `${what}: packet ${i} bytes ${crc32(bytes)}, ffprobe ${p.data_hash}`);
  }
}

function checkLayout(d: DemuxedVideo, what: string): void {
  let at = 0;
  for (let i = 0; i < d.count; i++) {
    check(d.offset[i] === at, `${what}: packet ${i} at ${d.offset[i]}, expected ${at} (back to back)`);
    at += d.size[i]!;
  }
  check(at === d.data.length, `${what}: sizes add up to ${at}, data holds ${d.data.length}`);
  check(d.key[0] === 1, `${what}: the first packet is not a keyframe`);
  const sorted = Array.from(d.ptsUs, (t) => t / 1e6).sort((a, b) => a - b);
  check(
    d.frameTimes.length === d.count && d.frameTimes.every((t, i) => Math.abs(t - sorted[i]!) < 1e-9),
    `${what}: frameTimes are not the packets' times sorted`,
  );
}

/** The whole stream: every packet as ffprobe sees it, its bytes, and the decoder configuration. */
export async function demuxMatchesFfprobe(
  pool: DecodePool,
  load: FixtureLoader,
  name: (typeof DEMUX_VIDEOS)[number],
): Promise<DemuxedVideo> {
  const [bytes, ref] = await Promise.all([load(name), probe(load, name)]);
  const d = await pool.demuxVideo(bytes);
  check(d.count === ref.packets.length, `${name}: ${d.count} packets, ffprobe ${ref.packets.length}`);
  for (const [i, p] of ref.packets.entries()) checkPacket(d, i, p, ref, name);
  checkLayout(d, name);
  check(d.codecString === CODEC_STRINGS[name], `${name}: codec string ${d.codecString}, expected ${CODEC_STRINGS[name]}`);
  check(d.codedWidth === 160 && d.codedHeight === 120, `${name}: coded size ${d.codedWidth}x${d.codedHeight}`);
  check(Math.abs(d.frameRate - 10) < 1e-9 && Math.abs(d.durationSeconds - 2) < 0.05, `${name}: ${d.frameRate} fps, ${d.durationSeconds} s`);
  const extradata = ref.streams[0].extradata_hash;
  if (name.includes('h264')) {
    check(d.description !== undefined && d.description[0] === 1, `${name}: no avcC description`);
    check(crc32(d.description) === extradata, `${name}: description ${crc32(d.description)}, ffprobe's extradata ${extradata}`);
  } else {
    check(d.description === undefined, `${name}: a description where WebCodecs wants none`);
  }
  const index = await pool.demuxVideo(bytes, { packets: false });
  check(index.data.length === 0 && index.count === d.count, `${name}: packets: false still returned ${index.data.length} bytes`);
  for (const [i, p] of ref.packets.entries()) checkPacket(index, i, p, ref, `${name} (index only)`);
  return d;
}

/** B-frames (the MKV): packets in decode order, so their pts are not sorted, while frameTimes is. */
export async function bFramesReorder(pool: DecodePool, load: FixtureLoader): Promise<void> {
  const d = await pool.demuxVideo(await load('testsrc.h264.mkv'));
  const pts = Array.from(d.ptsUs);
  check(
    pts.some((t, i) => i > 0 && t < pts[i - 1]!),
    'testsrc.h264.mkv: packets in presentation order, expected B-frames in decode order',
  );
  const expected = Array.from({ length: 20 }, (_, i) => i / 10);
  check(
    d.frameTimes.length === 20 && expected.every((t, i) => Math.abs(d.frameTimes[i]! - t) < 1e-6),
    `frameTimes ${Array.from(d.frameTimes)} are not the 20 frames at 10 fps`,
  );
}

/**
 * A range is a run of the whole stream's packets (decode order) that starts at the last keyframe
 * at or before its start and holds every packet shown in [start, end], so each such frame decodes.
 */
export async function rangesStartAtKeyframesAndCover(pool: DecodePool, load: FixtureLoader, name: string): Promise<void> {
  const bytes = await load(name);
  const whole = await pool.demuxVideo(bytes, { packets: false });
  const ranges: Array<[number, number | undefined]> = [
    [0, 0.35],
    [0.42, 0.95],
    [1.0, 1.0],
    [0.73, undefined],
    [1.95, 5],
  ];
  for (const [start, end] of ranges) {
    const what = `${name} [${start}, ${end ?? 'end'}]`;
    const r = await pool.demuxVideo(bytes, { startSeconds: start, ...(end === undefined ? {} : { endSeconds: end }) });
    checkLayout(r, what);
    const first = whole.ptsUs.indexOf(r.ptsUs[0]!);
    check(first >= 0, `${what}: first packet not in the whole stream`);
    for (let i = 0; i < r.count; i++)
      check(
        whole.ptsUs[first + i] === r.ptsUs[i] && whole.size[first + i] === r.size[i],
        `${what}: packet ${i} is not the whole's ${first + i}`,
      );
    let lastKey = 0;
    for (let i = 0; i < whole.count; i++) if (whole.key[i] && whole.ptsUs[i]! <= start * 1e6) lastKey = i;
    check(first === lastKey, `${what}: starts at packet ${first}, the last keyframe at or before the start is ${lastKey}`);
    for (let i = 0; i < whole.count; i++) {
      const t = whole.ptsUs[i]!;
      const inside = t >= start * 1e6 && (end === undefined || t <= end * 1e6);
      check(!inside || (i >= first && i < first + r.count), `${what}: the frame at ${t} µs (packet ${i}) is missing`);
    }
    if (end === undefined) check(first + r.count === whole.count, `${what}: stops before the end`);
    else check(first + r.count < whole.count || end >= 2, `${what}: read to the end of the stream`);
  }
}

/** Streamed through a ByteSource with a small window: the same result as the whole file. */
export async function streamedEqualsWhole(pool: DecodePool, load: FixtureLoader, name: string): Promise<void> {
  const bytes = await load(name);
  for (const options of [{}, { startSeconds: 20.5, endSeconds: 31 }]) {
    const whole = await pool.demuxVideo(bytes, options);
    const streamed = await pool.demuxVideo(memoryByteSource(bytes), { ...options, windowBytes: 8192 });
    const what = `${name} streamed ${JSON.stringify(options)}`;
    check(streamed.count === whole.count && whole.count > 0, `${what}: ${streamed.count} packets, whole ${whole.count}`);
    for (const field of ['ptsUs', 'dtsUs', 'durationUs', 'key', 'offset', 'size', 'data', 'frameTimes'] as const)
      check(
        streamed[field].every((v, i) => Object.is(v, whole[field][i])),
        `${what}: ${field} differs`,
      );
    check(streamed.codecString === whole.codecString, `${what}: codec string ${streamed.codecString}`);
  }
}

async function failsWith(
  pool: DecodePool,
  input: Promise<unknown>,
  code: DecodeErrorCode | DecodeErrorCode[],
  what: string,
): Promise<void> {
  const codes = Array.isArray(code) ? code : [code];
  await rejectsWith(
    input,
    (e) => e instanceof DecodeError && codes.includes(e.code),
    `${what}: expected DecodeError ${codes.join(' or ')}`,
  );
  const after = await pool.demuxVideo(new Uint8Array(0)).catch((e: unknown) => e);
  check(after instanceof DecodeError && after.code === 'empty', `${what}: the pool does not go on`);
}

/** Damaged input and limits fail their item with the right code; the pool goes on. */
export async function badInputFails(pool: DecodePool, load: FixtureLoader): Promise<void> {
  const mp4 = await load('testsrc.h264.mp4');
  const mkv = await load('testsrc.h264.mkv');
  // An MP4 whose index (moov, at the end) is cut off cannot be told from one that never had it, as in decodeVideo.
  await failsWith(pool, pool.demuxVideo(mp4.subarray(0, mp4.length >> 1)), ['truncated', 'corrupt'], 'MP4 cut in half (index at the end)');
  await failsWith(pool, pool.demuxVideo(mkv.subarray(0, mkv.length >> 1)), 'truncated', 'MKV cut in half');
  let seed = 7;
  const noise = Uint8Array.from({ length: 4096 }, () => (seed = (seed * 1103515245 + 12345) >>> 0) >>> 24);
  await failsWith(pool, pool.demuxVideo(noise), 'unknown-format', 'random bytes');
  await failsWith(pool, pool.demuxVideo(await load('sine440.m4a')), 'unknown-format', 'a file with no video stream');
  await failsWith(pool, pool.demuxVideo(mp4, { maxPackets: 3 }), 'too-large', 'maxPackets 3');
  await failsWith(pool, pool.demuxVideo(mp4, { maxBytes: 1000 }), 'too-large', 'maxBytes 1000');
  await failsWith(pool, pool.demuxVideo(mp4, { maxPixels: 160 * 120 - 1 }), 'too-large', 'maxPixels below the frame');
  await failsWith(pool, pool.demuxVideo(mp4, { maxDurationSeconds: 1 }), 'too-large', 'maxDurationSeconds 1');
  const index = await pool.demuxVideo(mp4, { maxBytes: 0, packets: false });
  check(index.count === 20, `maxBytes does not bound an index-only read: ${index.count} packets`);
}

/** flip: true gives the unflipped clip mirrored left to right, byte for byte. */
export async function flipMirrorsFrames(pool: DecodePool, load: FixtureLoader): Promise<void> {
  const bytes = await load('testsrc.h264.mp4');
  const [w, h, ch, n] = [37, 24, 3, 4];
  const options = { width: w, height: h, channels: 3 as const, fit: 'cover' as const, frames: { indices: [0, 3, 9, 19] } };
  const size = w * h * ch * n;
  const plain = pool.allocate(size);
  const flipped = pool.allocate(size);
  try {
    await pool.decodeVideo(bytes, plain, options);
    await pool.decodeVideo(bytes, flipped, { ...options, flip: true });
    const a = plain.bytes.slice();
    const b = flipped.bytes.slice();
    check(
      a.some((v, i) => v !== b[i]),
      'the flipped clip equals the plain one',
    );
    for (let f = 0; f < n; f++)
      for (let y = 0; y < h; y++)
        for (let x = 0; x < w; x++)
          for (let c = 0; c < ch; c++) {
            const at = ((f * h + y) * w + x) * ch + c;
            const mirrored = ((f * h + y) * w + (w - 1 - x)) * ch + c;
            check(a[at] === b[mirrored], `frame ${f} (${x}, ${y}) channel ${c}: ${a[at]}, mirrored ${b[mirrored]}`);
          }
  } finally {
    plain.free();
    flipped.free();
  }
}

/** In the workers mode a ByteSource is refused (no thread can wait for it); whole files still demux. */
export async function workersRefuseByteSource(pool: DecodePool, load: FixtureLoader): Promise<void> {
  const bytes = await load('testsrc.h264.mp4');
  await rejectsWith(
    pool.demuxVideo(memoryByteSource(bytes)),
    (e) => e instanceof DecodeError && e.code === 'bad-request',
    'a ByteSource in the workers mode',
  );
  const d = await pool.demuxVideo(bytes);
  check(d.count === 20 && d.data.length === d.size.reduce((a, b) => a + b, 0), 'the workers mode does not demux a whole file');
}

type Scenario = (pool: DecodePool, load: FixtureLoader) => Promise<void>;

/** Every mode. */
export const demuxScenarios: Record<string, Scenario> = {
  "each fixture's packets, bytes and decoder configuration match ffprobe": async (pool, load) => {
    for (const name of DEMUX_VIDEOS) await demuxMatchesFfprobe(pool, load, name);
  },
  'B-frames: packets in decode order, frameTimes sorted': bFramesReorder,
  'ranges start at the keyframe at or before their start and hold every frame up to their end': async (pool, load) => {
    for (const name of DEMUX_VIDEOS) await rangesStartAtKeyframesAndCover(pool, load, name);
  },
  'damaged files, files without video and limits fail with their codes; the pool goes on': badInputFails,
  'flip: true mirrors every frame of decodeVideo, byte for byte': flipMirrorsFrames,
};

/** The pthreads mode: streamed input. */
export const streamedDemuxScenarios: Record<string, Scenario> = {
  'streamed through a ByteSource with an 8 KiB window: the same packets as the whole file': async (pool, load) => {
    for (const name of ['long.h264.mp4', 'long.vp9.webm', 'testsrc.h264.mkv']) await streamedEqualsWhole(pool, load, name);
  },
};
