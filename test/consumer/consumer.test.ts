// The consumer tier: Tandem installed from its npm tarball into fresh projects outside the
// repository, used as the README's "Use Tandem in your app" snippets (examples/) say, as written.
import { cpSync, createReadStream, existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { extname, join, normalize } from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumArgs } from '../../vite.config.ts';
import { CORPUS_ALPHABET } from '../../src/synthetic/index.ts';
import { loadTimmWeights } from '../../src/vit/index.ts';
import { MockHub, serveMockHub } from '../shared/hub-server.ts';
import { serveOnNode } from '../shared/node-serve.ts';
import { embeddingModel } from '../shared/onnx-model.ts';
import { hubImageFile } from '../shared/parquet-loader-scenarios.ts';
import { smallTimmFile } from '../shared/timm-scenarios.ts';
import { sampleImages } from '../shared/transfer-scenarios.ts';
import { packedFiles, project, repoRoot, run } from './projects.ts';

const deno = join(repoRoot, 'node_modules', '.bin', 'deno');

interface PageResult {
  mode: string;
  format: string;
  pixels: number;
  batches?: number[];
  failed?: number;
  trained?: { steps: number; lossFinite: boolean };
}

let browser: Browser;
beforeAll(async () => {
  browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: chromiumArgs, headless: true });
}, 120_000);
afterAll(async () => {
  await browser?.close();
});

async function openPage(url: string): Promise<PageResult> {
  const page = await browser.newPage();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  try {
    await page.goto(url);
    await page.waitForSelector('#out[data-done]', { timeout: 120_000 });
    const text = (await page.textContent('#out')) ?? '';
    expect(await page.getAttribute('#out', 'data-done'), text).toBe('true');
    expect(errors).toEqual([]);
    return JSON.parse(text) as PageResult;
  } finally {
    await page.close();
  }
}

/** Starts a long-running command and resolves with its URL once it prints one. */
/** A dev or preview server; `output()` is everything it has printed so far. */
function serve(cmd: string, args: string[], cwd: string): Promise<{ url: string; stop(): void; output(): string }> {
  return new Promise((resolve, reject) => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    import('node:child_process').then(({ spawn }) => {
      const child = spawn(cmd, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
      let output = '';
      const timer = setTimeout(() => (child.kill(), reject(new Error(`${cmd} ${args.join(' ')} printed no URL: ${output}`))), 60_000);
      const onData = (chunk: Buffer) => {
        output += chunk.toString();
        // biome-ignore lint/suspicious/noControlCharactersInRegex: strips the terminal's colour escapes (ESC [ … m)
        const match = /http:\/\/(?:127\.0\.0\.1|localhost):\d+\/?/.exec(output.replace(/\x1b\[[0-9;]*m/g, ''));
        if (match) {
          clearTimeout(timer);
          resolve({ url: match[0].replace('localhost', '127.0.0.1'), stop: () => child.kill(), output: () => output });
        }
      };
      child.stdout.on('data', onData);
      child.stderr.on('data', onData);
      child.on('exit', (code) => (clearTimeout(timer), reject(new Error(`${cmd} exited with ${code}: ${output}`))));
    }, reject);
  });
}

const TYPES: Record<string, string> = {
  '.html': 'text/html',
  '.js': 'text/javascript',
  '.mjs': 'text/javascript',
  '.wasm': 'application/wasm',
  '.jpg': 'image/jpeg',
  '.json': 'application/json',
};

/**
 * A plain static server for the no-bundler page, with or without cross-origin isolation; `cdn`
 * serves files to any origin, as a CDN does (CORS and a cross-origin resource policy).
 */
function staticServer(root: string, isolated: boolean, cdn = false): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    const path = normalize(join(root, decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname)));
    const file = path.endsWith('/') ? join(path, 'index.html') : path;
    if (!file.startsWith(root) || !existsSync(file) || !statSync(file).isFile()) return void res.writeHead(404).end();
    const headers: Record<string, string> = { 'Content-Type': TYPES[extname(file)] ?? 'application/octet-stream' };
    if (isolated) Object.assign(headers, { 'Cross-Origin-Opener-Policy': 'same-origin', 'Cross-Origin-Embedder-Policy': 'require-corp' });
    if (cdn) Object.assign(headers, { 'Access-Control-Allow-Origin': '*', 'Cross-Origin-Resource-Policy': 'cross-origin' });
    res.writeHead(200, headers);
    createReadStream(file).pipe(res);
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`, server })),
  );
}

/**
 * A page whose import map points at the package on another origin, as a notebook's CDN import
 * does; with `moduleBase`, the decode modules come from a third origin (a self-hosted mirror).
 */
function cdnPage(cdn: string, moduleBase?: string): string {
  const options = moduleBase ? `, moduleBase: ${JSON.stringify(moduleBase)}` : '';
  const map = { imports: { tandem: `${cdn}dist/index.js`, 'tandem/train': `${cdn}dist/train/index.js` } };
  return `<!doctype html>
<html><head><meta charset="utf-8" /><script type="importmap">${JSON.stringify(map)}</script></head>
<body><pre id="out">loading…</pre>
<script type="module">
  import { DecodePool } from 'tandem';
  import { runTraining, syntheticData } from 'tandem/train';
  const out = document.getElementById('out');
  try {
    const pool = await DecodePool.create({ threads: 2${options} });
    const bytes = new Uint8Array(await (await fetch('photo.jpg')).arrayBuffer());
    const { pixels, info } = await pool.decode(bytes, { width: 224, height: 224, fit: 'cover' });
    const mode = pool.mode;
    await pool.close();
    // 40 generated JPEGs, every 5th held out: 4 steps of 8 through the whole loader.
    const data = await syntheticData({ count: 40 });
    const report = await runTraining(data, { epochs: 1, batchSize: 8, threads: 2, seed: 1, lr: 2e-3, augment: false, reportEvery: 1${options} });
    const losses = report.timeline.steps.map((s) => s.loss);
    out.textContent = JSON.stringify({
      mode, format: info.format, pixels: pixels.length, failed: report.failures,
      trained: { steps: report.steps, lossFinite: losses.length > 0 && losses.every(Number.isFinite) },
    });
    out.dataset.done = 'true';
  } catch (error) {
    out.textContent = 'error: ' + (error instanceof Error ? error.stack ?? error.message : String(error));
    out.dataset.done = 'error';
  }
</script></body></html>`;
}

/** Serves `dir` isolated and not; each time the cdnPage `page` must decode (pthreads when isolated, else workers) and train. */
async function expectPageDecodesAndTrains(dir: string, page: string): Promise<void> {
  for (const isolated of [true, false]) {
    const { url, server } = await staticServer(dir, isolated);
    try {
      expect(await openPage(`${url}${page}`)).toEqual({
        mode: isolated ? 'pthreads' : 'workers',
        format: 'jpeg',
        pixels: 150528,
        failed: 0,
        trained: { steps: 4, lossFinite: true },
      });
    } finally {
      server.close();
    }
  }
}

/** photos/<class>/<image>.jpg, as the README's snippet reads: the project's images/a and images/b. */
function copyPhotos(dir: string): void {
  for (const cls of ['a', 'b']) cpSync(join(dir, 'images', cls), join(dir, 'photos', cls), { recursive: true });
}

/** videos/<class>/<n>.mp4: the first `perClass` generated moving-shapes videos (scripts/make-fixtures.sh) of each direction. */
function copyVideos(dir: string, perClass: number): void {
  const from = join(repoRoot, 'test', 'fixtures', 'generated', 'moving-shapes');
  rmSync(join(dir, 'videos'), { recursive: true, force: true });
  for (const cls of ['down', 'left', 'right', 'up'])
    for (const file of readdirSync(join(from, cls)).sort().slice(0, perClass))
      cpSync(join(from, cls, file), join(dir, 'videos', cls, file));
}

describe('Tandem installed from its tarball', () => {
  it('the tarball holds the built library and wasm modules, not tests or TypeScript sources', async () => {
    const files = await packedFiles();
    expect(files).toContain('dist/index.js');
    expect(files).toContain('dist/vite/index.d.ts');
    expect(files).toContain('wasm/dist/tandem-decode.wasm');
    expect(files).toContain('wasm/dist/tandem-decode-st.mjs');
    expect(files.filter((f) => /^(test|src|bench|demo|scripts|examples)\//.test(f) || (f.endsWith('.ts') && !f.endsWith('.d.ts')))).toEqual(
      [],
    );
  });

  it('a Node 20 script in plain JavaScript decodes a JPEG and loads two batches', async () => {
    const dir = await project('node', 'node');
    const { stdout } = await run('node', ['load-images.mjs'], dir);
    expect(stdout).toMatch(/photo\.jpg: jpeg 320x240 -> 150528 bytes of RGB/);
    expect(stdout).toMatch(/loaded 8 images of 2 classes; 0 failed/);
  });

  it("the README's snippet (examples/node/train-folder.mjs), in plain JavaScript on Node 20, trains the ViT from a folder of photos on the GPU", async () => {
    const dir = await project('node-train', 'node', { packages: ['webgpu'] }); // Node's WebGPU is the user's install
    copyPhotos(dir);
    const { stdout } = await run('node', ['train-folder.mjs'], dir);
    // 8 photos × 5 epochs, every row labelled: the loss report counts them all; the summary names the stages.
    expect(stdout).toMatch(/samples: 40,/);
    expect(stdout).toMatch(/loss: \d+\.\d+/);
    expect(stdout).toMatch(/to-gpu/);
  });

  it("the same snippet in Deno (examples/deno/train-folder.ts, await using) trains on Deno's WebGPU", async () => {
    const dir = await project('deno', 'deno');
    copyPhotos(dir);
    const { stdout } = await run(deno, ['run', '-A', '--node-modules-dir=manual', 'train-folder.ts'], dir);
    expect(stdout).toMatch(/samples: 40,/);
    expect(stdout).toMatch(/to-gpu/);
  });

  describe('training from a Hugging Face Hub dataset (examples/*/train-hub.*), HF_ENDPOINT at a mock Hub on 127.0.0.1', () => {
    // tandem/shapes: the Hub's Parquet conversion of an image dataset, as the Hub writes it (an Image
    // struct, a ClassLabel named cat, dog, bird): train in two files (40 rows in row groups of 16, 24
    // in groups of 8), test in one (40 rows). tandem's hyparquet dependencies come with the tarball's install.
    let hub: Awaited<ReturnType<typeof serveMockHub>>;
    beforeAll(async () => {
      const file = (count: number, offset: number, rowGroupSize: number) =>
        hubImageFile(
          {
            bytes: sampleImages(offset + count, 48)
              .slice(offset)
              .map((x) => x.bytes),
            labels: Array.from({ length: count }, (_, r) => (offset + r) % 3),
          },
          rowGroupSize,
        );
      const mock = new MockHub();
      const conversion = {
        'default/train/0000.parquet': file(40, 0, 16),
        'default/train/0001.parquet': file(24, 40, 8),
        'default/test/0000.parquet': file(40, 64, 16),
      };
      mock.repos.set('tandem/shapes', { revisions: { 'refs/convert/parquet': conversion } });
      hub = await serveMockHub(serveOnNode, mock);
    });
    afterAll(async () => {
      await hub?.close();
    });
    /** What the example printed; each file of the split was read from the mock Hub's storage host. */
    const expectTrained = (stdout: string, rows: number, steps: number, files: string[]) => {
      expect(stdout).toMatch(/^classes: cat, dog, bird$/m);
      expect(stdout).toMatch(new RegExp(`^${steps} steps, ${rows} rows, ${rows} labelled; 0 failed; loss: \\d+\\.\\d+$`, 'm'));
      expect(stdout).toMatch(/to-gpu/);
      for (const f of files) expect(hub.hub.served.get(`tandem/shapes/refs/convert/parquet/${f}`)?.bytes, f).toBeGreaterThan(0);
    };

    it('Node 20, plain JavaScript: `node train-hub.mjs tandem/shapes train` trains the ViT on every row of the train split', async () => {
      const dir = await project('node-train', 'node', { packages: ['webgpu'] }); // Node's WebGPU is the user's install
      const { stdout } = await run('node', ['train-hub.mjs', 'tandem/shapes', 'train'], dir, { HF_ENDPOINT: hub.endpoint });
      expect(stdout).toMatch(new RegExp(`^tandem/shapes \\(train\\) from ${hub.endpoint}$`, 'm'));
      expectTrained(stdout, 64, 2, ['default/train/0000.parquet', 'default/train/0001.parquet']);
    });

    it('Deno: HF_DATASET=tandem/shapes HF_SPLIT=test deno run -A train-hub.ts trains on the test split', async () => {
      const dir = await project('deno', 'deno');
      const env = { HF_ENDPOINT: hub.endpoint, HF_DATASET: 'tandem/shapes', HF_SPLIT: 'test' };
      const { stdout } = await run(deno, ['run', '-A', '--node-modules-dir=manual', 'train-hub.ts'], dir, env);
      expect(stdout).toMatch(/^tandem\/shapes \(test\) from http:\/\/127\.0\.0\.1:\d+$/m);
      expectTrained(stdout, 40, 2, ['default/test/0000.parquet']);
    });
  });

  it('a Node 20 script resumes a sharded loader on 3 ranks from the positions 2 ranks saved (regroupShardStates)', async () => {
    const dir = await project('node', 'node');
    const { stdout } = await run('node', ['elastic-resume.mjs'], dir);
    expect(stdout).toMatch(/2 ranks → 3: 8 samples read, 8 distinct, of 8/);
  });

  it('a Node 20 script (examples/node/video-clips.mjs) loads clips from a folder of videos through tandem/video, on the wasm road', async () => {
    const dir = await project('node', 'node');
    copyVideos(dir, 6);
    const { stdout } = await run('node', ['video-clips.mjs', 'videos'], dir);
    const batches = [...stdout.matchAll(/^batch \[(\d+), 4, 32, 32, 3\] labels ([a-z ]+); first clip's frames at ([\d. ]+) s$/gm)];
    expect(batches.map((b) => Number(b[1]))).toEqual([8, 8, 8]);
    // 'uniform', in order: the classes sorted by name, six videos each; 16 frames at 8 fps, every 3rd.
    const labels = batches.flatMap((b) => b[2]!.split(' '));
    expect(labels).toEqual(['down', 'left', 'right', 'up'].flatMap((c) => Array(6).fill(c)));
    for (const b of batches) expect(b[3]!.split(' ').map(Number)).toEqual([0, 0.375, 0.75, 1.125]);
    expect(stdout).toMatch(/^24 clips of 4 classes \(down, left, right, up\); 0 failed$/m);
    expect(stdout).toMatch(/bottleneck: /);
  });

  it('a Node 20 script (examples/node/text-train.mjs) writes the generated corpus as token shards and trains the tiny GPT from them on the GPU', async () => {
    const dir = await project('node-train', 'node', { packages: ['webgpu'] }); // Node's WebGPU is the user's install
    const { stdout } = await run('node', ['text-train.mjs', '40'], dir);
    expect(stdout).toMatch(/^wrote 1000 documents, \d+ tokens in [2-9] shards$/m);
    // best-fit rows of 65 tokens from documents of 20 to 400 characters: some padding, never most.
    const padding = Number(/^shape \[8, 64\]; 40 steps; padding (\d+\.\d)%$/m.exec(stdout)?.[1]);
    expect(padding).toBeGreaterThan(0);
    expect(padding).toBeLessThan(50);
    // A fresh model starts near ln 24 = 3.18 nats a character; 35 more steps take it well down.
    const [, before, after] = /^loss before: (\d+\.\d+) after: (\d+\.\d+)/m.exec(stdout) ?? [];
    expect(Number(before)).toBeGreaterThan(2.5);
    expect(Number(after)).toBeLessThan(0.8 * Number(before));
    const completion = JSON.parse(/^completion: (".*")$/m.exec(stdout)?.[1] ?? '""') as string;
    expect(completion.startsWith('the cat') && completion.length > 'the cat'.length).toBe(true);
    expect([...completion].every((c) => CORPUS_ALPHABET.includes(c))).toBe(true);
    expect(stdout).toMatch(/to-gpu.*\| bottleneck: /);
  });

  it('the installed tandem CLI fine-tunes from timm-layout ViT weights and saves them (tandem train --weights)', async () => {
    const dir = await project('node-train', 'node', { packages: ['webgpu'] }); // Node's WebGPU is the user's install
    writeFileSync(join(dir, 'start.safetensors'), smallTimmFile());
    const args = ['train', '--data', 'images', '--epochs', '1', '--batch', '4', '--threads', '2', '--progress', 'lines'];
    const out = ['--weights', 'start.safetensors', '--save-weights', 'end.safetensors', '--report', 'report.json'];
    const { stdout } = await run(join(dir, 'node_modules', '.bin', 'tandem'), [...args, ...out], dir);
    expect(stdout).toMatch(/weights: start\.safetensors \(ViT 32px patch 8 width 64 depth 2; new head for 2 classes\)/);
    const saved = loadTimmWeights(readFileSync(join(dir, 'end.safetensors')));
    expect(saved.config).toMatchObject({ imageSize: 32, width: 64, classes: 2, gelu: 'erf' });
  });

  it('a Node 20 script embeds a folder of images with ONNX Runtime Web through tandem/onnx', async () => {
    const dir = await project('onnx-embeddings', 'onnx-embeddings', { packages: ['onnxruntime-web'] });
    writeFileSync(join(dir, 'model.onnx'), embeddingModel(1, 32, 32));
    const { stdout } = await run('node', ['embed.mjs', 'model.onnx', 'images'], dir);
    expect(stdout).toMatch(/embedded 8 images, 8 values each; 0 failed/);
  });

  it('a Vite app trains a TensorFlow.js model on Tandem batches on one shared WebGPU device (tandem/tfjs)', async () => {
    const dir = await project('tfjs-app', 'tfjs-app', {
      vite: true,
      packages: ['@tensorflow/tfjs-core', '@tensorflow/tfjs-backend-cpu', '@tensorflow/tfjs-backend-webgpu', '@tensorflow/tfjs-layers'],
    });
    const server = await serve(join(dir, 'node_modules', '.bin', 'vite'), ['--host', '127.0.0.1', '--port', '0'], dir);
    try {
      const result = (await openPage(server.url)) as unknown as { backend: string; path: string; steps: number; lossFinite: boolean };
      expect(result).toMatchObject({ backend: 'webgpu', path: 'webgpu', steps: 6, lossFinite: true });
    } finally {
      server.stop();
    }
  });

  it('a Deno script importing npm:tandem does the same', async () => {
    const dir = await project('deno', 'deno');
    const { stdout } = await run(deno, ['run', '-A', '--node-modules-dir=manual', 'load-images.ts'], dir);
    expect(stdout).toMatch(/photo\.jpg: jpeg 320x240 -> 150528 bytes of RGB/);
    expect(stdout).toMatch(/loaded 8 images of 2 classes; 0 failed/);
  });

  describe('a Vite app with tandem/vite', () => {
    const PARQUET_READ = { rows: 12, classes: ['cat', 'dog', 'bird'], failed: 0 };
    let dir: string;
    beforeAll(async () => {
      dir = await project('vite-app', 'vite-app', { vite: true, packages: ['@huggingface/tokenizers'] });
      // A Hub-shaped Parquet file (Image struct, ClassLabel cat, dog, bird): 12 rows in row groups of 5.
      const images = sampleImages(12, 48);
      const labels = images.map((_, r) => r % 3);
      writeFileSync(join(dir, 'public', 'shapes.parquet'), hubImageFile({ bytes: images.map((x) => x.bytes), labels }, 5));
      // The same app without cross-origin isolation: the pool must fall back to workers.
      writeFileSync(
        join(dir, 'vite.open.config.js'),
        "import { defineConfig } from 'vite';\nimport { tandem } from 'tandem/vite';\nexport default defineConfig({ plugins: [tandem({ crossOriginIsolation: false })] });\n",
      );
    }, 300_000);
    const vite = () => join(dir, 'node_modules', '.bin', 'vite');

    it('vite build without tandem/vite fails, and the error names the fix', async () => {
      // Only COOP/COEP headers, as a user who has not read the README would configure it.
      writeFileSync(
        join(dir, 'vite.plain.config.js'),
        "import { defineConfig } from 'vite';\nconst headers = { 'Cross-Origin-Opener-Policy': 'same-origin', 'Cross-Origin-Embedder-Policy': 'require-corp' };\nexport default defineConfig({ server: { headers }, preview: { headers } });\n",
      );
      const failed = await run(vite(), ['build', '--config', 'vite.plain.config.js', '--outDir', 'dist-plain', '--emptyOutDir'], dir).then(
        () => '',
        // biome-ignore lint/suspicious/noControlCharactersInRegex: the code frame colours each character (ESC [ … m)
        (e: Error) => e.message.replace(/\x1b\[[0-9;]*m/g, ''),
      );
      expect(failed).toMatch(/top-level await/);
      expect(failed).toContain('tandem/vite');
    });

    for (const isolated of [true, false]) {
      const config = isolated ? 'vite.config.js' : 'vite.open.config.js';
      const mode = isolated ? 'pthreads' : 'workers';
      it(`vite dev, ${isolated ? 'cross-origin isolated' : 'not isolated'}: decodes, loads two batches, trains the tiny ViT, tokenises text in a worker (${mode})`, async () => {
        const server = await serve(vite(), ['--config', config, '--host', '127.0.0.1', '--port', '0'], dir);
        try {
          expect(await openPage(server.url)).toEqual({
            mode,
            format: 'jpeg',
            pixels: 150528,
            batches: [4, 4],
            failed: 0,
            trained: { steps: 3, lossFinite: true },
            tokenised: { tokens: 'some', sameIds: true },
            parquet: PARQUET_READ,
          });
          // tandem() pre-bundles the Parquet reader Tandem imports on use: found only then, Vite
          // would re-optimise and reload the page mid-run.
          expect(server.output()).not.toMatch(/new dependencies optimized|reloading/);
        } finally {
          server.stop();
        }
      });
      it(`vite build + preview, ${isolated ? 'cross-origin isolated' : 'not isolated'}: the same (${mode})`, async () => {
        const outDir = `dist-${mode}`;
        const built = await run(vite(), ['build', '--config', config, '--outDir', outDir, '--emptyOutDir'], dir);
        expect(built.stdout + built.stderr).not.toMatch(/externalized for browser compatibility|unable to parse the worker options/);
        const server = await serve(vite(), ['preview', '--config', config, '--outDir', outDir, '--host', '127.0.0.1', '--port', '0'], dir);
        try {
          expect(await openPage(server.url)).toEqual({
            mode,
            format: 'jpeg',
            pixels: 150528,
            batches: [4, 4],
            failed: 0,
            trained: { steps: 3, lossFinite: true },
            tokenised: { tokens: 'some', sameIds: true },
            parquet: PARQUET_READ,
          });
        } finally {
          server.stop();
        }
      });
    }
  });

  it('a webpack 5 app (no plugins, no config for Tandem) builds without warnings and decodes and loads two batches, isolated or not', async () => {
    const dir = await project('webpack-app', 'webpack-app', { webpack: true });
    const built = await run(join(dir, 'node_modules', '.bin', 'webpack'), [], dir);
    expect(built.stdout + built.stderr).toMatch(/compiled successfully/);
    for (const isolated of [true, false]) {
      const { url, server } = await staticServer(dir, isolated);
      try {
        expect(await openPage(url)).toEqual({
          mode: isolated ? 'pthreads' : 'workers',
          format: 'jpeg',
          pixels: 150528,
          batches: [4, 4],
          failed: 0,
        });
      } finally {
        server.close();
      }
    }
  }, 300_000);

  it('the Deno notebook, importing npm:tandem, runs in a real Jupyter (nbconvert --execute, Deno kernel) and trains', async () => {
    const dir = await project('notebook', 'notebook');
    rmSync(join(dir, 'report.json'), { force: true }); // the project folder is reused between runs
    // The kernelspec goes into a folder of this project, found through JUPYTER_PATH.
    const home = join(dir, 'jupyter-home');
    await run(deno, ['jupyter', '--install', '--force'], dir, { HOME: home });
    await run(
      'jupyter',
      ['nbconvert', '--to', 'notebook', '--execute', 'tandem.ipynb', '--output', 'executed.ipynb', '--ExecutePreprocessor.timeout=300'],
      dir,
      { JUPYTER_PATH: join(home, '.local', 'share', 'jupyter') },
    );
    type Output = { output_type: string; ename?: string; evalue?: string };
    const executed = JSON.parse(readFileSync(join(dir, 'executed.ipynb'), 'utf8')) as { cells: Array<{ outputs?: Output[] }> };
    const outputs = executed.cells.flatMap((c) => c.outputs ?? []);
    expect(outputs.filter((o) => o.output_type === 'error')).toEqual([]);
    // What the run did is read from the file its last cell writes, not from the notebook's outputs:
    // Deno's kernel can report a cell idle before that cell's outputs are sent, and nbconvert then
    // drops them (seen here: once the last epoch's line, once a whole cell's result).
    const report = JSON.parse(readFileSync(join(dir, 'report.json'), 'utf8')) as {
      train: number;
      held: number;
      batches: number;
      steps: number;
      epochs: Array<{ epoch: number; trainLoss: number; valAccuracy: number }>;
    };
    expect(report).toMatchObject({ train: 205, held: 51, batches: 7, steps: 26 });
    expect(report.epochs.map((e) => e.epoch)).toEqual([1, 2, 3, 4]);
    expect(report.epochs.every((e) => Number.isFinite(e.trainLoss) && e.valAccuracy >= 0 && e.valAccuracy <= 1)).toBe(true);
  }, 300_000);

  it('a plain page with an import map and no bundler decodes a JPEG, isolated or not', async () => {
    const dir = await project('script-tag', 'script-tag');
    for (const isolated of [true, false]) {
      const { url, server } = await staticServer(dir, isolated);
      try {
        expect(await openPage(url)).toEqual({ mode: isolated ? 'pthreads' : 'workers', format: 'jpeg', pixels: 150528 });
      } finally {
        server.close();
      }
    }
  });

  it('a page on one origin imports the package from another (a CDN): decodes, loads and trains, with and without isolation', async () => {
    const dir = await project('script-tag', 'script-tag');
    // The installed package is the unpacked tarball; served as a CDN serves it, on its own origin.
    const cdn = await staticServer(join(dir, 'node_modules', 'tandem'), false, true);
    try {
      writeFileSync(join(dir, 'cdn.html'), cdnPage(cdn.url));
      await expectPageDecodesAndTrains(dir, 'cdn.html');
    } finally {
      cdn.server.close();
    }
  });

  it('with moduleBase, the decode modules come from a mirror on a third origin (the CDN has none): decodes and trains, with and without isolation', async () => {
    const dir = await project('script-tag', 'script-tag');
    const packageCopy = join(dir, 'cdn-without-wasm');
    cpSync(join(dir, 'node_modules', 'tandem'), packageCopy, { recursive: true });
    rmSync(join(packageCopy, 'wasm', 'dist'), { recursive: true });
    const cdn = await staticServer(packageCopy, false, true);
    const mirror = await staticServer(join(dir, 'node_modules', 'tandem', 'wasm', 'dist'), false, true);
    try {
      writeFileSync(join(dir, 'mirror.html'), cdnPage(cdn.url, mirror.url));
      await expectPageDecodesAndTrains(dir, 'mirror.html');
    } finally {
      cdn.server.close();
      mirror.server.close();
    }
  });
});
