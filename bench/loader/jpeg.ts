// Just enough of a JPEG header to choose the native reference's images: size, components, coding
// (baseline or progressive), the luma sampling factors, and whether an Exif segment is present.

export interface JpegHeader {
  width: number;
  height: number;
  components: number;
  progressive: boolean;
  /** Luma sampling factors h×v: '2x2' is 4:2:0 with 3 components, '1x1' 4:4:4 (or gray). */
  lumaSampling: string;
  exif: boolean;
}

export function jpegHeader(b: Uint8Array): JpegHeader | undefined {
  if (b[0] !== 0xff || b[1] !== 0xd8) return undefined;
  let i = 2;
  let exif = false;
  while (i + 4 <= b.length) {
    if (b[i] !== 0xff) return undefined;
    const marker = b[i + 1]!;
    if (marker === 0xff) {
      i++;
      continue;
    }
    const length = (b[i + 2]! << 8) | b[i + 3]!;
    if (marker === 0xe1 && String.fromCharCode(...b.subarray(i + 4, i + 8)) === 'Exif') exif = true;
    const sof = marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc;
    if (sof) {
      const sampling = b[i + 11]!;
      return {
        height: (b[i + 5]! << 8) | b[i + 6]!,
        width: (b[i + 7]! << 8) | b[i + 8]!,
        components: b[i + 9]!,
        progressive: marker === 0xc2 || marker === 0xc6 || marker === 0xca || marker === 0xce,
        lumaSampling: `${sampling >> 4}x${sampling & 15}`,
        exif,
      };
    }
    i += 2 + length;
  }
  return undefined;
}
