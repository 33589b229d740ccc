// Media files whose headers lie about their size, made from the real fixtures by rewriting the
// fields the decoders read: an H.264 SPS inside an MP4, a VP9 key frame header inside a WebM, a
// FLAC STREAMINFO block. The rest of each file stays as it was, so only the forged field differs.

/** Reads an RBSP bit by bit, with the exp-Golomb codes H.264 headers use. */
class BitReader {
  pos = 0;
  constructor(readonly bytes: Uint8Array) {}
  bit(): number {
    const b = this.bytes[this.pos >> 3];
    if (b === undefined) throw new Error('forge: read past the end of the SPS');
    return (b >> (7 - (this.pos++ & 7))) & 1;
  }
  u(n: number): number {
    let v = 0;
    for (let i = 0; i < n; i++) v = v * 2 + this.bit();
    return v;
  }
  ue(): number {
    let zeros = 0;
    while (this.bit() === 0) zeros++;
    return 2 ** zeros - 1 + this.u(zeros);
  }
}

class BitWriter {
  readonly bits: number[] = [];
  u(value: number, n: number): void {
    for (let i = n - 1; i >= 0; i--) this.bits.push(Math.floor(value / 2 ** i) & 1);
  }
  ue(value: number): void {
    const n = Math.floor(Math.log2(value + 1));
    this.u(0, n);
    this.u(value + 1, n + 1);
  }
  bytes(): Uint8Array {
    const out = new Uint8Array(Math.ceil(this.bits.length / 8));
    this.bits.forEach((b, i) => {
      out[i >> 3]! |= b << (7 - (i & 7));
    });
    return out;
  }
}

/** NAL payload → RBSP: drops the emulation-prevention 0x03 after every 00 00. */
function nalToRbsp(nal: Uint8Array): Uint8Array {
  const out: number[] = [];
  for (let i = 0; i < nal.length; i++) {
    if (i >= 2 && nal[i] === 3 && nal[i - 1] === 0 && nal[i - 2] === 0 && out.at(-1) === 0 && out.at(-2) === 0) continue;
    out.push(nal[i]!);
  }
  return Uint8Array.from(out);
}

/** RBSP → NAL payload: a 0x03 goes in wherever 00 00 would be followed by 00–03. */
function rbspToNal(rbsp: Uint8Array): Uint8Array {
  const out: number[] = [];
  let zeros = 0;
  for (const b of rbsp) {
    if (zeros >= 2 && b <= 3) {
      out.push(3);
      zeros = 0;
    }
    out.push(b);
    zeros = b === 0 ? zeros + 1 : 0;
  }
  return Uint8Array.from(out);
}

const HIGH_PROFILES = new Set([100, 110, 122, 244, 44, 83, 86, 118, 128, 138, 139, 134, 135]);

/** The SPS with its picture size replaced by `mbWidth` × `mbHeight` macroblocks. */
function forgeSps(sps: Uint8Array, mbWidth: number, mbHeight: number): Uint8Array {
  const rbsp = nalToRbsp(sps);
  const r = new BitReader(rbsp);
  const w = new BitWriter();
  const copyU = (n: number) => w.u(r.u(n), n);
  const copyUe = () => {
    const v = r.ue();
    w.ue(v);
    return v;
  };
  copyU(8); // NAL header
  const profile = r.u(8);
  w.u(profile, 8);
  copyU(16); // constraint flags, level
  copyUe(); // seq_parameter_set_id
  if (HIGH_PROFILES.has(profile)) {
    if (copyUe() === 3) copyU(1); // chroma_format_idc, separate_colour_plane_flag
    copyUe(); // bit depths
    copyUe();
    copyU(1); // qpprime_y_zero_transform_bypass_flag
    if (r.u(1)) throw new Error('forge: SPS scaling matrices are not handled');
    w.u(0, 1);
  }
  copyUe(); // log2_max_frame_num_minus4
  const pocType = copyUe();
  if (pocType === 0) copyUe();
  else if (pocType === 1) throw new Error('forge: pic_order_cnt_type 1 is not handled');
  copyUe(); // max_num_ref_frames
  copyU(1); // gaps_in_frame_num_value_allowed_flag
  r.ue();
  r.ue();
  w.ue(mbWidth - 1);
  w.ue(mbHeight - 1);
  // The rest up to and including the stop bit (the last 1 of the RBSP), then byte alignment.
  let last = rbsp.length * 8 - 1;
  while (((rbsp[last >> 3]! >> (7 - (last & 7))) & 1) === 0) last--;
  while (r.pos <= last) w.u(r.bit(), 1);
  return rbspToNal(w.bytes());
}

const u32 = (b: Uint8Array, at: number) => new DataView(b.buffer, b.byteOffset).getUint32(at);
const type = (b: Uint8Array, at: number) => String.fromCharCode(...b.subarray(at + 4, at + 8));
/** MP4 boxes on the way to avcC, and how many bytes of their own fields come before their children. */
const MP4_CONTAINERS: Record<string, number> = { moov: 0, trak: 0, mdia: 0, minf: 0, stbl: 0, stsd: 8, avc1: 78 };

/** Offsets of the boxes from the top of `mp4` down to (and including) the first box of `wanted`. */
function boxPath(mp4: Uint8Array, wanted: string, start = 0, end = mp4.length): number[] | undefined {
  for (let at = start; at + 8 <= end; at += u32(mp4, at)) {
    if (u32(mp4, at) < 8) throw new Error('forge: a box size this helper does not handle');
    const name = type(mp4, at);
    if (name === wanted) return [at];
    const skip = MP4_CONTAINERS[name];
    if (skip === undefined) continue;
    const inner = boxPath(mp4, wanted, at + 8 + skip, at + u32(mp4, at));
    if (inner) return [at, ...inner];
  }
  return undefined;
}

/**
 * An H.264 MP4 whose SPS declares `mbWidth` × `mbHeight` macroblocks (16 px each); the container's
 * own avc1/tkhd sizes are left alone, since libavformat takes the size from the SPS. The file's
 * moov must follow its mdat (as the fixtures' do), so no sample offset moves.
 */
export function forgeH264Size(mp4: Uint8Array, mbWidth: number, mbHeight: number): Uint8Array {
  const path = boxPath(mp4, 'avcC');
  if (!path) throw new Error('forge: no avcC box');
  const avcC = path.at(-1)!;
  const mdat = boxPath(mp4, 'mdat')?.[0];
  if (mdat === undefined || mdat > path[0]!) throw new Error('forge: the moov box must follow the mdat box');
  const spsCountAt = avcC + 8 + 5;
  if ((mp4[spsCountAt]! & 31) !== 1) throw new Error('forge: expected one SPS');
  const spsLength = (mp4[spsCountAt + 1]! << 8) | mp4[spsCountAt + 2]!;
  const spsAt = spsCountAt + 3;
  const sps = forgeSps(mp4.subarray(spsAt, spsAt + spsLength), mbWidth, mbHeight);
  const delta = sps.length - spsLength;
  const out = new Uint8Array(mp4.length + delta);
  out.set(mp4.subarray(0, spsAt));
  out.set(sps, spsAt);
  out.set(mp4.subarray(spsAt + spsLength), spsAt + sps.length);
  out[spsCountAt + 1] = sps.length >> 8;
  out[spsCountAt + 2] = sps.length & 0xff;
  const view = new DataView(out.buffer);
  for (const at of path) view.setUint32(at, u32(mp4, at) + delta);
  return out;
}

/** A VP9 WebM whose key frame headers (profile 0) declare `width` × `height` (each ≤ 65536). */
export function forgeVp9Size(webm: Uint8Array, width: number, height: number): Uint8Array {
  const out = webm.slice();
  let found = 0;
  // frame marker 10, profile 00, show_existing 0, key frame 0, then the sync code 49 83 42.
  for (let i = 0; i + 9 <= out.length; i++) {
    if ((out[i]! & 0xfc) !== 0x80 || out[i + 1] !== 0x49 || out[i + 2] !== 0x83 || out[i + 3] !== 0x42) continue;
    // After the sync code: colour space (3 bits) and range (1 bit), then width-1 and height-1, 16 bits each.
    const size = ((width - 1) * 65536 + (height - 1)) >>> 0;
    out[i + 4] = (out[i + 4]! & 0xf0) | (size >>> 28);
    out[i + 5] = (size >>> 20) & 0xff;
    out[i + 6] = (size >>> 12) & 0xff;
    out[i + 7] = (size >>> 4) & 0xff;
    out[i + 8] = (out[i + 8]! & 0x0f) | ((size & 0xf) << 4);
    found++;
  }
  if (!found) throw new Error('forge: no VP9 key frame header');
  return out;
}

/** A FLAC file whose STREAMINFO declares `sampleRate` Hz (20 bits) and/or `totalSamples` (36 bits). */
export function forgeFlacStreamInfo(flac: Uint8Array, forged: { sampleRate?: number; totalSamples?: number }): Uint8Array {
  if (String.fromCharCode(...flac.subarray(0, 4)) !== 'fLaC' || (flac[4]! & 0x7f) !== 0) throw new Error('forge: no STREAMINFO first');
  const out = flac.slice();
  const at = 8 + 10; // metadata block header, then min/max block size and min/max frame size
  if (forged.sampleRate !== undefined) {
    const r = forged.sampleRate;
    out[at] = r >> 12;
    out[at + 1] = (r >> 4) & 0xff;
    out[at + 2] = (out[at + 2]! & 0x0f) | ((r & 0xf) << 4);
  }
  if (forged.totalSamples !== undefined) {
    const n = forged.totalSamples;
    out[at + 3] = (out[at + 3]! & 0xf0) | Math.floor(n / 2 ** 32);
    new DataView(out.buffer).setUint32(at + 4, n >>> 0);
  }
  return out;
}
