// Counts a tier's tests against what its test files registered, so a tier cannot silently run
// fewer: every *.test.ts file of the tier's folder must have registered tests and reported each.
//   node scripts/tier-count.mjs vitest <report.json> <test folder>   (vitest's JSON reporter)
//   node scripts/tier-count.mjs deno <deno test log> <test folder>   ("running N tests from ./file")
//   node scripts/tier-count.mjs bench <bench-smoke log> bench        (scripts/bench-smoke.sh: one
//     test per benchmark, every bench/*.ts must have its PASS or FAIL line)
// Prints "passed failed"; every problem found is printed on stderr and counted as a failure.
import { readdirSync, readFileSync } from 'node:fs';
import { relative, resolve } from 'node:path';

const [kind, report, folder] = process.argv.slice(2);
const files = readdirSync(folder, { recursive: kind !== 'bench' })
  .map(String)
  .filter((f) => (kind === 'bench' ? f.endsWith('.ts') : f.endsWith('.test.ts')))
  .map((f) => relative(process.cwd(), resolve(folder, f)));
const problems = [];
let passed = 0;
let failed = 0;

if (kind === 'vitest') {
  let r;
  try {
    r = JSON.parse(readFileSync(report, 'utf8'));
  } catch {
    problems.push(`no readable report at ${report}`);
  }
  if (r) {
    const byFile = new Map(r.testResults.map((t) => [relative(process.cwd(), t.name), t]));
    for (const file of files) {
      const result = byFile.get(file);
      if (!result) problems.push(`${file}: not in the report (not collected)`);
      else if (result.assertionResults.length === 0)
        problems.push(`${file}: registered no tests${result.message ? ` (${result.message.split('\n')[0]})` : ''}`);
    }
    passed = r.numPassedTests;
    failed = r.numFailedTests + r.numPendingTests + r.numTodoTests; // none may be skipped
    const registered = r.testResults.reduce((n, t) => n + t.assertionResults.length, 0);
    if (passed + failed !== registered) problems.push(`${registered} tests registered, ${passed + failed} reported`);
  }
} else if (kind === 'deno') {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: strips the terminal's colour escapes (ESC [ … m)
  const log = readFileSync(report, 'utf8').replace(/\x1b\[[0-9;]*m/g, '');
  const registered = new Map([...log.matchAll(/^running (\d+) tests? from \.\/(\S+)$/gm)].map((m) => [m[2], Number(m[1])]));
  for (const file of files) {
    if (!registered.has(file)) problems.push(`${file}: never started (no "running N tests from" line)`);
    else if (registered.get(file) === 0) problems.push(`${file}: registered no tests`);
  }
  const line = log.match(/^(ok|FAILED) \| (\d+) passed(?: \((\d+) steps?\))? \| (\d+) failed.*$/m);
  if (!line) problems.push('no summary line: deno test ended before reporting');
  else {
    passed = Number(line[2]);
    failed = Number(line[4]);
    const total = [...registered.values()].reduce((a, b) => a + b, 0);
    if (passed + failed !== total) problems.push(`${total} tests registered, ${passed + failed} reported`);
  }
  const ignored = line?.[0].match(/(\d+) (ignored|filtered out)/);
  if (ignored && Number(ignored[1]) > 0) problems.push(`${ignored[1]} tests ${ignored[2]}: none may be skipped`);
} else if (kind === 'bench') {
  let log = '';
  try {
    log = readFileSync(report, 'utf8');
  } catch {
    problems.push(`no readable log at ${report}`);
  }
  const results = new Map([...log.matchAll(/^\[bench-smoke\] (PASS|FAIL) (\S+\.ts)/gm)].map((m) => [m[2], m[1]]));
  for (const file of files) {
    const result = results.get(file);
    if (result === 'PASS') passed++;
    else if (result === 'FAIL') failed++;
    else problems.push(`${file}: never ran (no PASS or FAIL line)`);
  }
} else {
  console.error('usage: tier-count.mjs vitest|deno|bench <report> <test folder>');
  process.exit(2);
}

for (const p of problems) console.error(`[tier-count] ${p}`);
console.log(passed, failed + problems.length);
