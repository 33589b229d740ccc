// Counts a tier's tests against what its test files registered, so a tier cannot silently run
// fewer: every *.test.ts file of the tier's folder must have registered tests and reported each.
//   node scripts/tier-count.mjs vitest <report.json> <test folder>   (vitest's JSON reporter)
//   node scripts/tier-count.mjs deno <deno test log> <test folder>   ("running N tests from ./file")
//   node scripts/tier-count.mjs bench <bench-smoke log> bench        (scripts/bench-smoke.sh: one
//     test per benchmark, every bench/*.ts must have its PASS or FAIL line)
//   node scripts/tier-count.mjs fuzz <fuzz log> wasm/fuzz            (wasm/fuzz/run.sh: one test per
//     target, each target with a floor must report)
// Then each file's count is held against its floor in test/tier-minimums.json (scripts/tier-minimums.mjs):
// a file below it, or a listed file missing, fails the tier; a file without a floor is only noted.
// Prints "passed failed"; every problem found is printed on stderr and counted as a failure. Each
// failed test's file, name and first lines of its error are also appended to
// test-results/failed-tests.txt, which scripts/test.sh prints beside its summary: CI shows only the
// end of a run's output, and a failure must name itself there.
import { appendFileSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { relative, resolve } from 'node:path';
import { checkMinimums, countsOf, MINIMUMS_FILE, readMinimums, stripColours } from './tier-minimums.mjs';

const [kind, report, folder] = process.argv.slice(2);
const files = (kind === 'fuzz' ? [] : readdirSync(folder, { recursive: kind !== 'bench' }))
  .map(String)
  .filter((f) => (kind === 'bench' ? f.endsWith('.ts') : f.endsWith('.test.ts')))
  .map((f) => relative(process.cwd(), resolve(folder, f)));
const problems = [];
/** "file > test: error" for every failed test. */
const failedTests = [];
let passed = 0;
let failed = 0;
/** Tests per file as the report has them; undefined when there is no report to read. */
let counts;

if (kind === 'vitest') {
  let r;
  try {
    const text = readFileSync(report, 'utf8');
    r = JSON.parse(text);
    counts = countsOf('vitest', text);
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
    for (const t of r.testResults)
      for (const a of t.assertionResults)
        if (a.status !== 'passed')
          failedTests.push(
            `${relative(process.cwd(), t.name)} > ${a.fullName ?? a.title}: ${a.status}: ${firstLines((a.failureMessages ?? []).join('\n'))}`,
          );
    for (const t of r.testResults)
      if (t.status === 'failed' && t.message) failedTests.push(`${relative(process.cwd(), t.name)}: ${firstLines(t.message)}`);
    passed = r.numPassedTests;
    failed = r.numFailedTests + r.numPendingTests + r.numTodoTests; // none may be skipped
    const registered = r.testResults.reduce((n, t) => n + t.assertionResults.length, 0);
    if (passed + failed !== registered) problems.push(`${registered} tests registered, ${passed + failed} reported`);
  }
} else if (kind === 'deno') {
  let log = '';
  try {
    log = stripColours(readFileSync(report, 'utf8'));
  } catch {
    problems.push(`no readable log at ${report}`);
  }
  const registered = countsOf('deno', log);
  counts = registered;
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
  // Deno lists each failed test under FAILURES as "name => ./file:line:col".
  const failures = log.split(/^\s*FAILURES\s*$/m)[1] ?? '';
  for (const m of failures.matchAll(/^(.+) => (\.\/\S+)$/gm)) failedTests.push(`${m[2]} > ${m[1]}`);
  for (const m of log.matchAll(/^(.+) \.\.\. FAILED\b.*$/gm)) if (!failures) failedTests.push(m[1]);
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
  counts = countsOf('bench', log);
  for (const file of files) {
    const result = results.get(file);
    if (result === 'PASS') passed++;
    else if (result === 'FAIL') {
      failed++;
      failedTests.push(`${file}: FAIL (test-results/bench-smoke/${file.replace(/^bench\//, '').replace(/\.ts$/, '')}.log)`);
    } else problems.push(`${file}: never ran (no PASS or FAIL line)`);
  }
} else if (kind === 'fuzz') {
  // Which targets ran is held by their floors (every target listed in the minimums must report).
  let log = '';
  try {
    log = readFileSync(report, 'utf8');
  } catch {
    problems.push(`no readable log at ${report}`);
  }
  counts = countsOf('fuzz', log);
  for (const m of log.matchAll(/^\[fuzz\] (fuzz-[\w-]+)(: .*no crash, leak or timeout| FAILED.*)$/gm)) {
    if (m[2]?.startsWith(' FAILED')) {
      failed++;
      failedTests.push(`${m[1]}:${m[2]}`);
    } else passed++;
  }
} else {
  console.error('usage: tier-count.mjs vitest|deno|bench|fuzz <report> <test folder>');
  process.exit(2);
}

const tier = relative(process.cwd(), resolve(folder));
let minimums;
try {
  minimums = readMinimums();
} catch (e) {
  problems.push(`no readable ${MINIMUMS_FILE}: ${e.message}`);
}
if (minimums && counts) {
  const held = checkMinimums(tier, counts, minimums);
  problems.push(...held.problems);
  for (const n of held.notes) console.error(`[tier-count] note: ${n}`);
}

for (const p of problems) console.error(`[tier-count] ${p}`);
if (failedTests.length > 0 || problems.length > 0) {
  mkdirSync('test-results', { recursive: true });
  const lines = [...failedTests, ...problems].map((f) => `${tier}: ${f}`);
  appendFileSync('test-results/failed-tests.txt', `${lines.join('\n')}\n`);
}

/** The first lines of an error message, without colours, on one line. */
function firstLines(message) {
  return stripColours(message)
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean)
    .slice(0, 4)
    .join(' | ')
    .slice(0, 600);
}
console.log(passed, failed + problems.length);
