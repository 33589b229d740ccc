// Serves the demo page with Vite on 127.0.0.1 and opens it in Debian's headless Chromium (WebGPU
// on SwiftShader), collecting console errors and uncaught page errors.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser, type Page } from 'playwright-core';
import { build, createServer, preview } from 'vite';
import { demoConfig } from '../../demo/vite.config.ts';
import { chromiumArgs } from '../../vite.config.ts';

export interface DemoSession {
  page: Page;
  url: string;
  errors: string[];
  close(): Promise<void>;
}

/** Serves the demo: Vite's dev server, or (built) `vite build` into a temporary folder + `vite preview`. */
async function serve(o: { isolated: boolean; built?: boolean }): Promise<{ port: number; close(): Promise<void> }> {
  const config = demoConfig({ isolated: o.isolated });
  const listen = { host: '127.0.0.1', port: 0, strictPort: false };
  if (o.built) {
    const outDir = mkdtempSync(join(tmpdir(), 'tandem-demo-'));
    await build({ ...config, configFile: false, build: { ...config.build, outDir } });
    const server = await preview({
      ...config,
      configFile: false,
      build: { ...config.build, outDir },
      preview: { ...config.preview, ...listen },
    });
    return {
      port: (server.httpServer.address() as AddressInfo).port,
      close: async () => (await server.close(), rmSync(outDir, { recursive: true, force: true })),
    };
  }
  const server = await createServer({ ...config, configFile: false, server: { ...config.server, ...listen } });
  await server.listen();
  return { port: (server.httpServer!.address() as AddressInfo).port, close: () => server.close() };
}

export async function openDemo(o: { isolated: boolean; query: string; built?: boolean }): Promise<DemoSession> {
  const server = await serve(o);
  let browser: Browser | undefined;
  try {
    const port = server.port;
    browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: chromiumArgs, headless: true });
    const page = await browser.newPage({ viewport: { width: 1340, height: 1000 } });
    const errors: string[] = [];
    page.on('console', (m) => m.type() === 'error' && errors.push(`console: ${m.text()}`));
    page.on('pageerror', (e) => errors.push(`page: ${e.message}`));
    const url = `http://127.0.0.1:${port}/?${o.query}`;
    await page.goto(url);
    const opened = browser;
    return {
      page,
      url,
      errors,
      async close() {
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

export function artifactPath(name: string): string {
  mkdirSync('test-results', { recursive: true });
  return `test-results/${name}`;
}
