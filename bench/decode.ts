// Image decode throughput, side by side in one run: Tandem's wasm pool at 1..N threads (decode +
// resize 224 + centre crop, with and without DCT-domain reduction) against PIL doing the same
// torchvision transform (Debian python3-pil, libjpeg-turbo), on the generated 500×375 JPEGs.
//   npx deno run -A bench/decode.ts [--images 256] [--reps 5] [--out docs/bench-decode.md]
// Needs the dataset from `npm run main` (or generates it) and, for the PIL column, python3-pil.
import { DecodePool } from '../src/decode/index.ts';
import { cacheDir, hardwareConcurrency } from '../src/runtime/index.ts';
import { ensureSyntheticFolder, listImageFolder } from '../src/sources/index.ts';

const args = Deno.args;
const flag = (name: string, fallback: number) => (args.includes(`--${name}`) ? Number(args[args.indexOf(`--${name}`) + 1]) : fallback);
const outPath = args.includes('--out') ? args[args.indexOf('--out') + 1]! : 'docs/bench-decode.md';
const count = flag('images', 256);
const reps = flag('reps', 5);
const root = `${cacheDir()}/datasets/synthetic-s0-n${count}`;
await ensureSyntheticFolder(root, { count });
const { files } = await listImageFolder(root);
const encoded = await Promise.all(files.map((f) => Deno.readFile(f.path)));
const cores = hardwareConcurrency();
const threadCounts = [...new Set([1, 2, cores])].filter((t) => t <= cores);

async function wasmRun(pool: DecodePool, reducedScale: boolean): Promise<{ seconds: number; cpu: number }> {
  const slot = 224 * 224 * 3;
  const target = pool.allocate(slot * pool.threads * 2);
  const cpu0 = cpuSeconds();
  const t0 = performance.now();
  let next = 0;
  const lane = async (k: number) => {
    for (let i = next++; i < encoded.length; i = next++) {
      await pool.decodeInto(encoded[i]!, target + k * slot, { width: 224, height: 224, fit: 'cover', reducedScale });
    }
  };
  await Promise.all(Array.from({ length: pool.threads * 2 }, (_, k) => lane(k)));
  const seconds = (performance.now() - t0) / 1000;
  pool.free(target);
  return { seconds, cpu: cpuSeconds() - cpu0 };
}

function cpuSeconds(): number {
  // Whole-process CPU time (all threads) from /proc, Linux only.
  const stat = Deno.readTextFileSync('/proc/self/stat').split(') ')[1]!.split(' ');
  return (Number(stat[11]) + Number(stat[12])) / 100;
}

const PIL_SCRIPT = `
import sys, time, resource
from PIL import Image
paths = sys.argv[1:]
def cpu(): r = resource.getrusage(resource.RUSAGE_SELF); return r.ru_utime + r.ru_stime
c0 = cpu(); t0 = time.perf_counter()
for p in paths:
    im = Image.open(p).convert('RGB')
    w, h = im.size; s = 224 / min(w, h)
    im = im.resize((max(224, round(w * s)), max(224, round(h * s))), Image.BILINEAR)
    l = (im.width - 224) // 2; t = (im.height - 224) // 2
    im.crop((l, t, l + 224, t + 224)).tobytes()
print(time.perf_counter() - t0, cpu() - c0)
`;

async function pilRun(): Promise<{ seconds: number; cpu: number } | undefined> {
  try {
    // Debian's python3 (with python3-pil), not whichever python3 comes first on PATH.
    const python = (await Deno.stat('/usr/bin/python3').then(() => true, () => false)) ? '/usr/bin/python3' : 'python3';
    const out = await new Deno.Command(python, { args: ['-c', PIL_SCRIPT, ...files.map((f) => f.path)], stdout: 'piped', stderr: 'piped' }).output();
    if (!out.success) return undefined;
    const [seconds, cpu] = new TextDecoder().decode(out.stdout).trim().split(' ').map(Number);
    return { seconds: seconds!, cpu: cpu! };
  } catch {
    return undefined;
  }
}

const pools = new Map<number, DecodePool>();
for (const t of threadCounts) pools.set(t, await DecodePool.create({ threads: t }));
const samples = new Map<string, Array<{ seconds: number; cpu: number }>>();
const add = (k: string, v: { seconds: number; cpu: number } | undefined) => v && samples.set(k, [...(samples.get(k) ?? []), v]);
for (let r = 0; r < reps; r++) {
  add('PIL, 1 process', await pilRun());
  for (const t of threadCounts) {
    // Alternate which variant goes first, so warm-up and neighbours' load fall on both alike.
    const variants = r % 2 === 0 ? [false, true] : [true, false];
    for (const reduced of variants) add(`wasm, ${t} thread${t > 1 ? 's' : ''}${reduced ? ', DCT reduction allowed' : ''}`, await wasmRun(pools.get(t)!, reduced));
  }
}
for (const p of pools.values()) await p.close();

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const rate = (k: string) => encoded.length / median(samples.get(k)!.map((s) => s.seconds));
const base = samples.has('PIL, 1 process') ? rate('PIL, 1 process') : undefined;
const one = rate('wasm, 1 thread');
const rows = [...samples.keys()].map((k) => {
  const cpuPerImage = (median(samples.get(k)!.map((s) => s.cpu)) / encoded.length) * 1000;
  return `| ${k} | ${rate(k).toFixed(0)} | ${cpuPerImage.toFixed(2)} | ${base ? (rate(k) / base).toFixed(2) : 'n/a'} | ${(rate(k) / one).toFixed(2)} |`;
});
const lines = [
  '# Decode benchmark',
  '',
  `Command: \`npx deno run -A bench/decode.ts --images ${count} --reps ${reps}\` (Deno ${Deno.version.deno}, ${cores} cores).`,
  `Job: ${encoded.length} generated 500×375 JPEGs (quality 90, 4:2:0) → RGB 224×224, shorter side to 224 then centre crop`,
  '(torchvision Resize(224) + CenterCrop(224)), bilinear. Interleaved repetitions, medians; images/s of wall time and',
  'CPU ms per image of the whole process (all threads).',
  '',
  '| decoder | images/s | CPU ms / image | × PIL (1 core) | × wasm 1 thread |',
  '|---|---|---|---|---|',
  ...rows,
  '',
  base ? '' : 'PIL column missing: install Debian\'s python3-pil to get it.',
];
console.log(lines.join('\n'));
await Deno.writeTextFile(outPath, lines.join('\n') + '\n');
