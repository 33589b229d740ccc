// The Chromium columns: a Vite server on 127.0.0.1 with COOP/COEP (cross-origin isolated, so
// Tandem's pthreads share memory) serves the bench page and the corpora's files; Debian's headless
// Chromium with WebGPU (vite.config.ts's chromiumArgs) opens it; the orchestrator calls the page's
// VideoPageApi one pass at a time.
import type { ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Browser, chromium } from 'playwright-core';
import { createServer, type Plugin, type ViteDevServer } from 'vite';
import { chromiumArgs, isolation } from '../../vite.config.ts';
import type { Corpus } from './corpus.ts';
import type { PageColumn, PageSample, PixelCheck } from './types.ts';

const root = new URL('../../', import.meta.url).pathname;

/** /bench-assets/video/<corpus id>/<index>: a corpus's files, bytes as on disk. */
function videoAssets(corpora: readonly Corpus[]): Plugin {
  const send = (res: ServerResponse, body: Uint8Array) => {
    res.writeHead(200, {
      'Content-Type': 'video/mp4',
      'Content-Length': body.length,
      'Cross-Origin-Resource-Policy': 'same-origin',
      ...isolation,
    });
    res.end(body);
  };
  return {
    name: 'tandem-bench-video-assets',
    configureServer(server) {
      server.middlewares.use('/bench-assets/video/', (req, res, next) => {
        const m = /^\/?([\w-]+)\/(\d+)$/.exec((req.url ?? '').split('?')[0]!);
        const video = m && corpora.find((c) => c.id === m[1])?.videos[Number(m[2])];
        if (video) return send(res, video.bytes);
        next();
      });
    },
  };
}

export interface VideoBrowser {
  version: string;
  adapter: string;
  pass(corpus: string, column: PageColumn): Promise<PageSample>;
  check(corpus: string): Promise<PixelCheck[]>;
  errors: string[];
  close(): Promise<void>;
}

export async function openVideoBrowser(corpora: readonly Corpus[], threads: number): Promise<VideoBrowser> {
  const server: ViteDevServer = await createServer({
    configFile: false,
    root,
    logLevel: 'error',
    plugins: [videoAssets(corpora)],
    server: { host: '127.0.0.1', port: 0, strictPort: false, headers: isolation, hmr: false },
    worker: { format: 'es' },
    optimizeDeps: { exclude: ['webgpu'] },
  });
  await server.listen();
  let browser: Browser | undefined;
  try {
    const port = (server.httpServer!.address() as AddressInfo).port;
    browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: chromiumArgs, headless: true });
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on('console', (m) => m.type() === 'error' && errors.push(`console: ${m.text()} (${m.location().url})`));
    page.on('pageerror', (e) => errors.push(`page: ${e.message}`));
    await page.goto(`http://127.0.0.1:${port}/bench/video/page/index.html`);
    await page.waitForFunction(() => !!window.tandemVideoBench, undefined, { timeout: 120_000 });
    let adapter = '';
    for (const c of corpora) {
      const ready = await page.evaluate(([id, plans, t]) => window.tandemVideoBench!.load(id, plans, t), [c.id, c.plans, threads] as const);
      if (!ready.crossOriginIsolated) throw new Error('bench page is not cross-origin isolated');
      adapter = ready.adapter;
    }
    const opened = browser;
    return {
      version: opened.version(),
      adapter,
      pass: (corpus, column) => page.evaluate(([c, col]) => window.tandemVideoBench!.pass(c, col), [corpus, column] as const),
      check: (corpus) => page.evaluate((c) => window.tandemVideoBench!.check(c), corpus),
      errors,
      async close() {
        await page.evaluate(() => window.tandemVideoBench!.close()).catch(() => undefined);
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
