// Per-file test counts fixed in advance (test/tier-minimums.json), so that a tier cannot stay green
// after losing tests: a deleted test file, a scenario table emptied, a benchmark removed. Counting
// what a run registered only proves the run was self-consistent; these floors are what it must reach.
//   node scripts/tier-minimums.mjs            compares the reports in test-results/ with the file
//   node scripts/tier-minimums.mjs --update   rewrites the file from those reports (after npm test,
//     or after one tier's run that wrote its report there; tiers without a report keep their floors).
//     It raises floors and adds new files; it refuses to lower a floor, or drop a file, unless each
//     such file is named with --lower FILE (say why in the change's note)
//   --reports DIR                             reads the reports from DIR instead of test-results/
// scripts/tier-count.mjs imports the parsing and the check from here.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';

export const MINIMUMS_FILE = 'test/tier-minimums.json';

/** Where each tier's report lies after scripts/test.sh, and which folder its counts belong to. */
const TIERS = [
  { folder: 'test/unit', kind: 'vitest', report: 'unit.json' },
  { folder: 'test/node-gpu', kind: 'vitest', report: 'node-gpu.json' },
  { folder: 'test/browser', kind: 'vitest', report: 'browser.json' },
  { folder: 'test/consumer', kind: 'vitest', report: 'consumer.json' },
  { folder: 'test/e2e', kind: 'vitest', report: 'e2e.json' },
  { folder: 'test/deno', kind: 'deno', report: 'deno.log' },
  { folder: 'bench', kind: 'bench', report: 'bench.log' },
  { folder: 'wasm/fuzz', kind: 'fuzz', report: 'fuzz.log' },
];

// biome-ignore lint/suspicious/noControlCharactersInRegex: strips the terminal's colour escapes (ESC [ … m)
export const stripColours = (text) => text.replace(/\x1b\[[0-9;]*m/g, '');

/** Tests each file registered, by repository-relative path. */
export function countsOf(kind, text) {
  if (kind === 'vitest') {
    const r = JSON.parse(text);
    return new Map(r.testResults.map((t) => [relative(process.cwd(), t.name), t.assertionResults.length]));
  }
  if (kind === 'deno')
    return new Map([...stripColours(text).matchAll(/^running (\d+) tests? from \.\/(\S+)$/gm)].map((m) => [m[2], Number(m[1])]));
  // One test per fuzz target: its result line from wasm/fuzz/run.sh, clean or FAILED.
  if (kind === 'fuzz') return new Map([...text.matchAll(/^\[fuzz\] (fuzz-[\w-]+)(?::| FAILED)/gm)].map((m) => [m[1], 1]));
  // One test per benchmark: its PASS or FAIL line from scripts/bench-smoke.sh.
  return new Map([...text.matchAll(/^\[bench-smoke\] (?:PASS|FAIL) (\S+\.ts)/gm)].map((m) => [m[1], 1]));
}

export function readMinimums() {
  return JSON.parse(readFileSync(MINIMUMS_FILE, 'utf8'));
}

/**
 * Holds one tier's counts against its floors. A file below its floor or missing from the run fails;
 * a file with no floor yet is only noted, so that a new test file never breaks the suite.
 */
export function checkMinimums(folder, counts, minimums) {
  const problems = [];
  const notes = [];
  const floors = minimums[folder];
  if (!floors) return { problems: [`no minimums for ${folder} in ${MINIMUMS_FILE}`], notes };
  for (const [file, floor] of Object.entries(floors)) {
    const n = counts.get(file);
    if (n === undefined)
      problems.push(`${file}: missing from the run, at least ${floor} test${floor === 1 ? '' : 's'} expected (${MINIMUMS_FILE})`);
    else if (n < floor) problems.push(`${file}: ${n} test${n === 1 ? '' : 's'}, at least ${floor} expected (${MINIMUMS_FILE})`);
  }
  for (const [file, n] of counts) {
    if (!(file in floors) && n > 0)
      notes.push(`${file}: ${n} tests and no minimum yet: add it to ${MINIMUMS_FILE} (node scripts/tier-minimums.mjs --update)`);
  }
  return { problems, notes };
}

function main(args) {
  const update = args.includes('--update');
  const allowedLower = new Set(args.flatMap((a, i) => (args[i - 1] === '--lower' ? [a] : [])));
  const refused = [];
  const at = args.indexOf('--reports');
  const reports = at >= 0 ? args[at + 1] : 'test-results';
  const minimums = existsSync(MINIMUMS_FILE) ? readMinimums() : {};
  let problems = 0;
  for (const { folder, kind, report: name } of TIERS) {
    const tier = { folder, kind, report: join(reports, name) };
    if (!existsSync(tier.report)) {
      console.log(`${tier.folder}: no report at ${tier.report}${update ? ', floors kept' : ''}`);
      continue;
    }
    const counts = countsOf(tier.kind, readFileSync(tier.report, 'utf8'));
    if (update) {
      const floors = {};
      for (const [file, n] of [...counts].sort(([a], [b]) => a.localeCompare(b))) {
        // A file that registered nothing (it failed to load) keeps its old floor instead of 0.
        const floor = n > 0 ? n : minimums[tier.folder]?.[file];
        if (n === 0) console.log(`${file}: registered no tests in ${tier.report}; its floor stays ${floor ?? 'unset'}`);
        if (floor !== undefined) floors[file] = floor;
      }
      for (const [file, old] of Object.entries(minimums[tier.folder] ?? {})) {
        const now = floors[file];
        if ((now === undefined || now < old) && !allowedLower.has(file)) {
          refused.push(`${file}: floor ${old} -> ${now ?? 'dropped'}`);
          floors[file] = old;
        }
      }
      minimums[tier.folder] = floors;
      console.log(`${tier.folder}: ${Object.keys(floors).length} files, ${Object.values(floors).reduce((a, b) => a + b, 0)} tests`);
    } else {
      const { problems: p, notes } = checkMinimums(tier.folder, counts, minimums);
      for (const line of [...p, ...notes]) console.log(line);
      problems += p.length;
      if (p.length === 0) console.log(`${tier.folder}: every floor met`);
    }
  }
  if (update && refused.length > 0) {
    for (const line of refused) console.log(`refused: ${line} (name it with --lower ${line.split(':')[0]} if that is meant)`);
    console.log(`${MINIMUMS_FILE} not written: a floor only goes down when its file is named`);
    process.exitCode = 1;
    return;
  }
  if (update) writeFileSync(MINIMUMS_FILE, `${JSON.stringify(minimums, null, 2)}\n`);
  process.exitCode = problems > 0 ? 1 : 0;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) main(process.argv.slice(2));
