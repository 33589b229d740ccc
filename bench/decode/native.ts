// The native column: Tandem's image path (wasm/src/image.c, fail.c, crop.c, jpeg.c, probe.c,
// resize.c, yuv2rgb.c, io.c) compiled with gcc against Debian's libav and libjpeg-turbo (both with their x86 SIMD), driven by bench/native/decode-native.c the way the wasm pool runs it. Built
// into the cache (never the repository), keyed by a hash of its sources; skipped, with the
// command to fix it, when gcc or the libav headers are missing.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync } from 'node:fs';
import { cacheDir } from '../../src/runtime/index.ts';
import type { Sample, Transform } from './types.ts';

export const NATIVE_PACKAGES = 'gcc libavformat-dev libavcodec-dev libswscale-dev libavutil-dev libjpeg62-turbo-dev';
const root = new URL('../../', import.meta.url).pathname;
// io.c: the allocation bound every image job applies (td_bound_allocations).
const SOURCES = [
  'bench/native/decode-native.c',
  'wasm/src/image.c',
  'wasm/src/fail.c',
  'wasm/src/crop.c',
  'wasm/src/jpeg.c',
  'wasm/src/probe.c',
  'wasm/src/resize.c',
  'wasm/src/yuv2rgb.c',
  'wasm/src/io.c',
];
const HEADERS = [
  'wasm/src/image.h',
  'wasm/src/fail.h',
  'wasm/src/crop.h',
  'wasm/src/jpeg.h',
  'wasm/src/probe.h',
  'wasm/src/resize.h',
  'wasm/src/yuv2rgb.h',
  'wasm/src/io.h',
  'wasm/src/tandem_decode.h',
];
const FLAGS = ['-O2', '-pthread'];
const LIBS = ['-lavformat', '-lavcodec', '-lswscale', '-lavutil', '-ljpeg', '-lm'];

function run(cmd: string, args: string[]): Promise<{ ok: boolean; stdout: string; stderr: string }> {
  return new Promise((resolve) =>
    execFile(cmd, args, { maxBuffer: 1 << 20 }, (err, stdout, stderr) =>
      resolve({ ok: !err, stdout, stderr: stderr || (err?.message ?? '') }),
    ),
  );
}

/** Path of the driver binary, or why the native column is skipped. */
export async function buildNative(): Promise<{ binary: string; libav: string } | { skipped: string }> {
  if (!existsSync('/usr/include/x86_64-linux-gnu/libavcodec/avcodec.h') && !existsSync('/usr/include/libavcodec/avcodec.h')) {
    return { skipped: `native column skipped: libav headers missing; run \`apt-get install ${NATIVE_PACKAGES}\`` };
  }
  const hash = createHash('sha256');
  for (const f of [...SOURCES, ...HEADERS]) hash.update(readFileSync(root + f));
  hash.update(FLAGS.join(' ') + LIBS.join(' '));
  const dir = `${cacheDir()}/bench/decode-native-${hash.digest('hex').slice(0, 16)}`;
  const binary = `${dir}/decode-native`;
  const version = await run('dpkg-query', ['-W', '-f=${Version}', 'libavcodec-dev']);
  const libav = version.ok ? `Debian libavcodec ${version.stdout}` : 'system libav';
  if (existsSync(binary)) return { binary, libav };
  mkdirSync(dir, { recursive: true });
  const built = await run('gcc', [...FLAGS, '-o', `${binary}.tmp`, ...SOURCES.map((s) => root + s), ...LIBS]);
  if (!built.ok) {
    return {
      skipped: `native column skipped: gcc failed (\`apt-get install ${NATIVE_PACKAGES}\`?): ${built.stderr
        .split('\n')
        .filter((l) => /error/.test(l))
        .slice(0, 3)
        .join(' | ')}`,
    };
  }
  renameSync(`${binary}.tmp`, binary);
  return { binary, libav };
}

export async function nativePass(
  binary: string,
  paths: string[],
  threads: number,
  transform: Transform,
  reducedScale: boolean,
): Promise<Sample> {
  const args = [
    '--threads',
    String(threads),
    ...(transform === 'decode' ? ['--native-size'] : []),
    ...(reducedScale ? ['--reduced'] : []),
    ...paths,
  ];
  const r = await run(binary, args);
  if (!r.ok) throw new Error(`decode-native failed: ${r.stderr}`);
  const o = JSON.parse(r.stdout) as { seconds: number; cpu: number; maxrss_kb: number; failed: number };
  return { seconds: o.seconds, cpu: o.cpu, failed: o.failed, maxRssKb: o.maxrss_kb };
}
