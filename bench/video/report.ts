// The tables and fixed paragraphs of docs/bench/video.md (medians and ranges: bench/shared/stats.ts).
import { table } from '../decode/report.ts';
import { fixed, spread, times } from '../shared/stats.ts';
import type { Corpus } from './corpus.ts';
import type { PageColumn } from './types.ts';

/** One timed pass of one column over one corpus. */
export interface Sample {
  seconds: number;
  /** Browser columns: to the first batch; NaN elsewhere. */
  firstBatchSeconds: number;
  cpu: number;
  clips: number;
  readbacksPerBatch: number | undefined;
  wrongTimes: number;
  failures: number;
  firstError?: string;
}
export type Column = PageColumn | 'ffmpeg-cli' | 'torchvision';

const rateOf = (s: Sample) => s.clips / s.seconds;
/** One corpus's table: every measured column's figures and its ratio to the <video> peer. */
export function corpusResults(
  corpus: Corpus,
  samples: ReadonlyMap<string, readonly Sample[]>,
  labels: Record<Column, string>,
  columns: readonly Column[],
): string[] {
  const element = samples.get(`${corpus.id}/element`);
  const elementRate = element ? spread(element.map(rateOf)).median : NaN;
  const rows = columns.flatMap((column) => {
    const ss = samples.get(`${corpus.id}/${column}`);
    if (!ss?.length) return [];
    const rate = spread(ss.map(rateOf));
    const cpu = spread(ss.map((s) => (s.cpu / s.clips) * 1000));
    const first = spread(ss.map((s) => s.firstBatchSeconds * 1000));
    const rb = ss[0]!.readbacksPerBatch === undefined ? undefined : spread(ss.map((s) => s.readbacksPerBatch ?? 0));
    return [
      [
        labels[column],
        `${fixed(rate.median, 1)} (${fixed(rate.min, 1)}–${fixed(rate.max, 1)})`,
        fixed(cpu.median, 1),
        fixed(first.median, 0),
        rb === undefined ? 'n/a (CPU bytes)' : fixed(rb.median, 1),
        times(rate.median / elementRate),
      ],
    ];
  });
  return [
    `### ${corpus.name}: ${corpus.description}`,
    '',
    ...table(['column', 'clips/s, median (range)', 'CPU ms / clip', 'first batch, ms', 'readbacks / batch', '× <video> peer'], rows),
    '',
  ];
}

/** What the software decoder and SwiftShader mean for the figures, and what a hardware decoder would change. */
export function hardwareLines(adapter: string | undefined): string[] {
  return [
    '## What a hardware decoder would change',
    '',
    `On this machine WebCodecs decodes in software (${adapter ?? 'no adapter'}; headless Chromium without a GPU has no hardware video`,
    "decoder, so VideoDecoder runs FFmpeg's H.264 decoder on the CPU), and the WebGPU adapter is SwiftShader, Vulkan on the CPU.",
    'SwiftShader refuses VideoFrame sources in importExternalTexture and copyExternalImageToTexture, so the frames reach the',
    "GPU by the 'bitmap' route of src/video/frame-pass.ts: createImageBitmap(frame) at full size, copyExternalImageToTexture of",
    'the bitmap, then the WGSL frame pass (antialiased resize and normalisation), one dispatch per frame. Every step of every',
    "column thus runs on the same CPU cores, the GPU's included, and CPU ms per clip is the figure to read beside clips/s.",
    'With a hardware decoder (a real GPU: VA-API, D3D11, VideoToolbox) decoding leaves the CPU, the frames stay in GPU memory,',
    "and the frame pass takes the 'external' route: importExternalTexture samples the decoded frame in place (zero copy), with",
    'no createImageBitmap, no upload and a resize that costs the GPU microseconds; what stays on the CPU is the demux and the',
    'feeding of chunks. The <video> and own-WebCodecs peers would decode in hardware too, but still read every frame back',
    '(getImageData), normalise it on the CPU and upload it again (writeBuffer); the wasm road stays on the CPU on any machine.',
    '',
  ];
}
