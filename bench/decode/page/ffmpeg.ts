// @ffmpeg/ffmpeg in the page, the way its users run it: one `exec` per file through its in-memory
// file system, on the single-thread core or the multi-thread core (pthreads), one or more
// instances taking files from a shared index. Core files are served by the bench server from
// node_modules. A file that takes longer than the timeout is counted as a hang: its instance is
// terminated and replaced, and the pass goes on.
import { FFmpeg } from '@ffmpeg/ffmpeg';
import { OUT, type FfmpegConfig, type PageSample } from '../types.ts';
import { FFMPEG_ARGS as ARGS } from './ffmpeg-args.ts';

const key = (c: FfmpegConfig) => `${c.core}x${c.instances}`;
const loaded = new Map<string, FFmpeg[]>();

async function loadOne(core: FfmpegConfig['core']): Promise<FFmpeg> {
  const ff = new FFmpeg();
  const base = new URL(`/bench-assets/ffmpeg/${core}/`, location.href).href;
  await ff.load({
    coreURL: `${base}ffmpeg-core.js`,
    wasmURL: `${base}ffmpeg-core.wasm`,
    ...(core === 'mt' ? { workerURL: `${base}ffmpeg-core.worker.js` } : {}),
  });
  return ff;
}

export async function ffmpegLoad(config: FfmpegConfig): Promise<{ loadSeconds: number }> {
  const t0 = performance.now();
  if (!loaded.has(key(config)))
    loaded.set(key(config), await Promise.all(Array.from({ length: config.instances }, () => loadOne(config.core))));
  return { loadSeconds: (performance.now() - t0) / 1000 };
}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T | 'timeout'> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const t = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), ms)));
  return Promise.race([p, t]).finally(() => clearTimeout(timer));
}

export async function ffmpegPass(config: FfmpegConfig, images: readonly Uint8Array[], timeoutMs: number): Promise<PageSample> {
  await ffmpegLoad(config);
  const instances = loaded.get(key(config))!;
  let next = 0,
    failed = 0,
    hangs = 0,
    reloads = 0;
  let firstError: string | undefined;
  const t0 = performance.now();
  const lane = async (k: number) => {
    for (let i = next++; i < images.length; i = next++) {
      const ff = instances[k]!;
      const logs: string[] = [];
      const onLog = ({ message }: { message: string }) => void logs.push(message);
      ff.on('log', onLog);
      const job = (async () => {
        await ff.writeFile('in.jpg', images[i]!.slice()); // writeFile transfers (detaches) its input
        const code = await ff.exec(ARGS);
        const out = code === 0 ? await ff.readFile('out.rgb') : undefined;
        await ff.deleteFile('in.jpg');
        if (out) await ff.deleteFile('out.rgb');
        if (!(out instanceof Uint8Array && out.length === OUT * OUT * 3))
          throw new Error(`exit code ${code}: ${logs.slice(-2).join(' / ')}`);
      })();
      const result = await withTimeout(
        job.then(
          () => 'ok' as const,
          (e: unknown) => (e instanceof Error ? e.message : String(e)),
        ),
        timeoutMs,
      );
      ff.off('log', onLog);
      if (result === 'ok') continue;
      failed++;
      if (result === 'timeout') hangs++;
      firstError ??= `file ${i}: ${result === 'timeout' ? `no answer within ${timeoutMs} ms` : result}`;
      // A hung or failing instance is replaced, as a user would have to; the time counts.
      ff.terminate();
      instances[k] = await loadOne(config.core);
      reloads++;
    }
  };
  await Promise.all(instances.map((_, k) => lane(k)));
  return { seconds: (performance.now() - t0) / 1000, failed, hangs, reloads, ...(firstError ? { firstError } : {}) };
}

export function ffmpegClose(): void {
  for (const list of loaded.values()) for (const ff of list) ff.terminate();
  loaded.clear();
}
