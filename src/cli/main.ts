#!/usr/bin/env node
// The `tandem` command line. Subcommands: smoke (the loader end to end on the generated dataset).
import { commandLineArgs, finishProcess } from '../runtime/index.ts';
import { defaultSmokeOptions, runSmoke } from './smoke.ts';

const HELP = `tandem — fast data loading for ML on the web platform

usage: tandem smoke [--images N] [--epochs N] [--batch N] [--size PX] [--threads N] [--data DIR]

  smoke   read JPEG files, decode them on wasm threads into shared batch buffers, upload the
          batches into WebGPU buffers and normalise them in WGSL; prints images/s.
          Without --data it generates a labelled synthetic dataset once (cached).`;

function parseArgs(argv: readonly string[]): { command: string | undefined; flags: Map<string, string> } {
  const flags = new Map<string, string>();
  let command: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg.startsWith('--')) {
      const [name, inline] = arg.slice(2).split('=', 2) as [string, string | undefined];
      flags.set(name, inline ?? (argv[i + 1]?.startsWith('--') === false ? argv[++i]! : 'true'));
    } else command ??= arg;
  }
  return { command, flags };
}

function intFlag(flags: Map<string, string>, name: string, fallback: number): number {
  const raw = flags.get(name);
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value <= 0) throw new Error(`--${name} must be a positive integer, got ${raw}`);
  return value;
}

async function main(argv: readonly string[]): Promise<number> {
  const { command, flags } = parseArgs(argv);
  if (!command || flags.has('help') || command === 'help') {
    console.log(HELP);
    return command ? 0 : 1;
  }
  if (command !== 'smoke') {
    console.error(`unknown command: ${command}\n\n${HELP}`);
    return 2;
  }
  const o = defaultSmokeOptions((line) => console.log(line));
  o.images = intFlag(flags, 'images', o.images);
  o.epochs = intFlag(flags, 'epochs', o.epochs);
  o.batchSize = intFlag(flags, 'batch', o.batchSize);
  o.imageSize = intFlag(flags, 'size', o.imageSize);
  o.threads = intFlag(flags, 'threads', o.threads);
  o.data = flags.get('data');
  const r = await runSmoke(o);
  console.log(
    `smoke: ${r.images} images in ${r.batches} batches, ${r.imagesPerSecond.toFixed(0)} images/s, ` +
      `first batch after ${r.firstBatchSeconds.toFixed(2)} s, ${r.failures} failed items`,
  );
  return r.images > 0 && r.failures === 0 ? 0 : 1;
}

main(commandLineArgs()).then(finishProcess, (error: unknown) => {
  console.error(error instanceof Error ? (error.stack ?? error.message) : error);
  finishProcess(1);
});
