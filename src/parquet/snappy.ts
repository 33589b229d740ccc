// Snappy block decompression for Parquet pages, written for what image datasets hold: pages of
// JPEG/PNG bytes that snappy cannot compress, so a page is a few long literals. A literal is one
// `set` (a memcpy) here, where the byte-by-byte loop of a plain port, or a wasm decoder's copies of
// the page in and out of its memory, cost more than the decode of the image (measured: 40% of a
// row group's read time in the wasm decoder's copies). Back references copy with copyWithin when
// they do not overlap their output, byte by byte (snappy's repeating pattern) when they do.
//
// Every length is checked against the input and the output before it is used: a corrupt page is
// a RangeError here (the caller names the file, row group and page), never a write out of bounds.

/** Below this many bytes a loop copies faster than a subarray and a set. */
const SHORT = 48;

/** Decompresses the snappy block `input` into a new array of exactly `outputLength` bytes. */
export function snappyUncompress(input: Uint8Array, outputLength: number): Uint8Array {
  const output = new Uint8Array(outputLength);
  const n = input.length;
  let pos = 0;
  // The preamble: the uncompressed length as a varint, which must be the length the page declares.
  let declared = 0;
  for (let shift = 0; ; shift += 7) {
    if (pos >= n || shift > 28) throw new RangeError('snappy: the length preamble is cut or too long');
    const c = input[pos++] ?? 0;
    declared += (c & 0x7f) * 2 ** shift;
    if (c < 0x80) break;
  }
  if (declared !== outputLength) throw new RangeError(`snappy: the block holds ${declared} bytes, the page says ${outputLength}`);
  let out = 0;
  while (pos < n) {
    const tag = input[pos++] ?? 0;
    const kind = tag & 3;
    if (kind === 0) {
      let len = (tag >>> 2) + 1;
      if (len > 60) {
        const bytes = len - 60;
        if (pos + bytes > n) throw new RangeError('snappy: a literal length is cut');
        len = 0;
        for (let i = 0; i < bytes; i++) len += (input[pos + i] ?? 0) * 2 ** (8 * i);
        len += 1;
        pos += bytes;
      }
      if (pos + len > n || out + len > outputLength) throw new RangeError('snappy: a literal runs past the block or the page');
      // A view and a set cost more than a short loop: sets for long literals only.
      if (len >= SHORT) output.set(input.subarray(pos, pos + len), out);
      else for (let i = 0; i < len; i++) output[out + i] = input[pos + i] as number;
      pos += len;
      out += len;
      continue;
    }
    let len: number;
    let offset: number;
    if (kind === 1) {
      if (pos >= n) throw new RangeError('snappy: a copy is cut');
      len = ((tag >>> 2) & 7) + 4;
      offset = ((tag >>> 5) << 8) | (input[pos++] ?? 0);
    } else {
      const bytes = kind === 2 ? 2 : 4;
      if (pos + bytes > n) throw new RangeError('snappy: a copy is cut');
      len = (tag >>> 2) + 1;
      offset = 0;
      for (let i = 0; i < bytes; i++) offset += (input[pos + i] ?? 0) * 2 ** (8 * i);
      pos += bytes;
    }
    if (offset === 0 || offset > out || out + len > outputLength) throw new RangeError('snappy: a copy reaches outside the output');
    if (offset >= len && len >= SHORT) output.copyWithin(out, out - offset, out - offset + len);
    else for (let i = 0; i < len; i++) output[out + i] = output[out - offset + i] as number;
    out += len;
  }
  if (out !== outputLength) throw new RangeError(`snappy: the block gave ${out} bytes, the page says ${outputLength}`);
  return output;
}
