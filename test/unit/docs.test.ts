// What the docs claim about the code, held against the code: docs/errors.md lists every error class
// and code in src/, README's snippet is the example file the consumer tier runs, README stays short
// and its quick start and links are true.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { STATUS_CODES } from '../../src/decode/abi.ts';

const root = new URL('../../', import.meta.url).pathname;
const read = (path: string) => readFileSync(join(root, path), 'utf8');
const sources = readdirSync(join(root, 'src'), { recursive: true })
  .map(String)
  .filter((f) => /\.(ts|js)$/.test(f))
  .map((f) => ({ file: `src/${f}`, text: read(`src/${f}`) }));

/** Every error code src/ declares: code unions, literal codes, and the decoder's job statuses. */
function declaredCodes(): Map<string, string> {
  const codes = new Map<string, string>();
  const add = (text: string, where: string) => {
    for (const m of text.matchAll(/'([a-z][a-z0-9-]*)'/g)) codes.set(m[1]!, where);
  };
  for (const { file, text } of sources) {
    for (const m of text.matchAll(/type \w+(?:ErrorCode|ErrorReason) =([^;]+);/g)) add(m[1]!.replace(/Exclude<[^>]*>/g, ''), file);
    for (const m of text.matchAll(/readonly code(?: = |: )((?:'[a-z-]+'(?: \| )?)+)/g)) add(m[1]!, file);
  }
  for (const status of STATUS_CODES) if (status !== 'ok') codes.set(status, 'src/decode/abi.ts');
  return codes;
}

describe('docs/errors.md', () => {
  const doc = read('docs/errors.md');
  it('lists every error code declared in src/', () => {
    const codes = declaredCodes();
    expect(codes.size).toBeGreaterThan(50);
    const missing = [...codes].filter(([code]) => !doc.includes(`\`${code}\``)).map(([code, file]) => `${code} (${file})`);
    expect(missing).toEqual([]);
  });
  it('names every error class in src/', () => {
    const classes = sources.flatMap(({ text }) =>
      [...text.matchAll(/class (\w+Error) extends (?:TandemError|CodedError)/g)].map((m) => m[1]!),
    );
    expect(classes.length).toBeGreaterThan(15);
    expect(classes.filter((name) => !doc.includes(name))).toEqual([]);
  });
});

describe('README.md', () => {
  const readme = read('README.md');
  it('is at most 150 lines and starts with the two quick-start lines', () => {
    expect(readme.split('\n').length).toBeLessThanOrEqual(150);
    expect(readme).toContain('```sh\nbash scripts/setup.sh && npm run main\nbash scripts/setup.sh && npm test\n```');
  });
  it('shows examples/node/train-folder.mjs as it is, in 15 lines or fewer', () => {
    const snippet = readme.match(/```js\n([\s\S]*?)```/)?.[1];
    expect(snippet).toBe(read('examples/node/train-folder.mjs'));
    expect(snippet!.trimEnd().split('\n').length).toBeLessThanOrEqual(15);
  });
  it('links only files that exist', () => {
    const links = [...readme.matchAll(/\]\(([^)#]+)(?:#[^)]*)?\)/g)].map((m) => m[1]!).filter((l) => !/^[a-z]+:/.test(l));
    expect(links.length).toBeGreaterThan(5);
    expect(links.filter((l) => !existsSync(join(root, l)))).toEqual([]);
  });
});

describe('docs/', () => {
  const docs = readdirSync(join(root, 'docs'), { recursive: true })
    .map(String)
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`);
  it('every relative link in every doc (and CONTRIBUTING.md) names a file that exists', () => {
    const broken: string[] = [];
    for (const doc of [...docs, 'CONTRIBUTING.md']) {
      for (const m of read(doc).matchAll(/\]\(([^)#\s]+)(?:#[^)]*)?\)/g)) {
        const target = m[1] ?? '';
        if (/^[a-z]+:/.test(target)) continue;
        if (!existsSync(join(root, dirname(doc), target))) broken.push(`${doc} -> ${target}`);
      }
    }
    expect(broken).toEqual([]);
  });
  it('guides and benchmark reports stand apart: every report in docs/bench/, every guide in the index', () => {
    const guides = docs.filter((d) => !d.startsWith('docs/bench/') && d !== 'docs/README.md');
    // A report names the command that wrote it; a guide is written by hand.
    expect(guides.filter((d) => /^Command: `|^```sh\n(npx )?deno run -A bench\//m.test(read(d).slice(0, 600)))).toEqual([]);
    const index = read('docs/README.md');
    expect(guides.filter((d) => !index.includes(`](${d.slice('docs/'.length)})`))).toEqual([]);
    const reports = docs.filter((d) => d.startsWith('docs/bench/') && !d.startsWith('docs/bench/before-window/'));
    expect(reports.filter((d) => !index.includes(`](${d.slice('docs/'.length)})`))).toEqual([]);
  });
});
