// The Chromium columns: a Vite server on 127.0.0.1 with COOP/COEP (so the page is cross-origin
// isolated and Tandem's pthreads and ffmpeg's core-mt can share memory) serves the bench page,
// the images and @ffmpeg's core files from node_modules; Debian's headless Chromium opens it and
// the orchestrator calls the page's PageApi one pass at a time.
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import type { ServerResponse } from 'node:http';
import { chromium, type Browser, type Page } from 'playwright-core';
import { createServer, type Plugin, type ViteDevServer } from 'vite';
import { chromiumArgs, isolation } from '../../vite.config.ts';
import type { BenchImage } from './images.ts';
import type { FfmpegConfig, PageSample, Transform } from './types.ts';

const root = new URL('../../', import.meta.url).pathname;
const CORE_FILES: Record<string, string> = {
  'st/ffmpeg-core.js': 'node_modules/@ffmpeg/core/dist/esm/ffmpeg-core.js',
  'st/ffmpeg-core.wasm': 'node_modules/@ffmpeg/core/dist/esm/ffmpeg-core.wasm',
  'mt/ffmpeg-core.js': 'node_modules/@ffmpeg/core-mt/dist/esm/ffmpeg-core.js',
  'mt/ffmpeg-core.wasm': 'node_modules/@ffmpeg/core-mt/dist/esm/ffmpeg-core.wasm',
  'mt/ffmpeg-core.worker.js': 'node_modules/@ffmpeg/core-mt/dist/esm/ffmpeg-core.worker.js',
};

/** /bench-assets/image/<i> and /bench-assets/ffmpeg/<core>/<file>, bytes as they are on disk. */
export function benchAssets(images: readonly BenchImage[]): Plugin {
  const send = (res: ServerResponse, type: string, body: Uint8Array) => {
    res.writeHead(200, {
      'Content-Type': type,
      'Content-Length': body.length,
      'Cross-Origin-Resource-Policy': 'same-origin',
      ...isolation,
    });
    res.end(body);
  };
  return {
    name: 'tandem-bench-assets',
    configureServer(server) {
      server.middlewares.use('/bench-assets/', (req, res, next) => {
        const path = (req.url ?? '').split('?')[0]!.replace(/^\//, '');
        const image = /^image\/(\d+)$/.exec(path);
        if (image && images[Number(image[1])]) return send(res, 'image/jpeg', images[Number(image[1])]!.bytes);
        const core = /^ffmpeg\/(.+)$/.exec(path)?.[1];
        const file = core ? CORE_FILES[core] : undefined;
        if (file) return send(res, file.endsWith('.wasm') ? 'application/wasm' : 'text/javascript', readFileSync(root + file));
        next();
      });
    },
  };
}

export interface BrowserBench {
  version: string;
  cores: number;
  tandem(threads: number, transform: Transform, reducedScale: boolean): Promise<PageSample>;
  bitmap(workers: number, transform: Transform): Promise<PageSample>;
  ffmpegLoad(config: FfmpegConfig): Promise<{ loadSeconds: number }>;
  ffmpeg(config: FfmpegConfig, timeoutMs: number, count: number): Promise<PageSample>;
  errors: string[];
  close(): Promise<void>;
}

export async function openBrowserBench(images: readonly BenchImage[], maxThreads: number): Promise<BrowserBench> {
  const server: ViteDevServer = await createServer({
    configFile: false,
    root,
    logLevel: 'error',
    plugins: [benchAssets(images)],
    server: { host: '127.0.0.1', port: 0, strictPort: false, headers: isolation, hmr: false },
    worker: { format: 'es' },
    // Serve @ffmpeg/ffmpeg as published: its worker is found relative to its own module.
    optimizeDeps: { noDiscovery: true, include: [] },
  });
  await server.listen();
  let browser: Browser | undefined;
  try {
    const port = (server.httpServer!.address() as AddressInfo).port;
    browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: chromiumArgs, headless: true });
    const page: Page = await browser.newPage();
    const errors: string[] = [];
    page.on('console', (m) => m.type() === 'error' && errors.push(`console: ${m.text()} (${m.location().url})`));
    page.on('pageerror', (e) => errors.push(`page: ${e.message}`));
    await page.goto(`http://127.0.0.1:${port}/bench/decode/page/index.html`);
    await page.waitForFunction(() => !!window.tandemBench, undefined, { timeout: 120_000 });
    const infos = images.map((m) => m.info);
    const ready = await page.evaluate(([n, i, t]) => window.tandemBench!.load(n, i, t), [images.length, infos, maxThreads] as const);
    if (!ready.crossOriginIsolated) throw new Error('bench page is not cross-origin isolated');
    const opened = browser;
    return {
      version: opened.version(),
      cores: ready.cores,
      tandem: (t, tr, r) => page.evaluate(([t, tr, r]) => window.tandemBench!.tandem(t, tr, r), [t, tr, r] as const),
      bitmap: (n, tr) => page.evaluate(([n, tr]) => window.tandemBench!.bitmap(n, tr), [n, tr] as const),
      ffmpegLoad: (c) => page.evaluate((c) => window.tandemBench!.ffmpegLoad(c), c),
      ffmpeg: (c, ms, n) => page.evaluate(([c, ms, n]) => window.tandemBench!.ffmpeg(c, ms, n), [c, ms, n] as const),
      errors,
      async close() {
        await page.evaluate(() => window.tandemBench!.close()).catch(() => undefined);
        await opened.close();
        await server.close();
      },
    };
  } catch (e) {
    await browser?.close();
    await server.close();
    throw e;
  }
}
