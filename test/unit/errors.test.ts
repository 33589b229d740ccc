// One failure model: every error class Tandem exports is a TandemError with a `code`, and every
// undelivered item is a Failed that isFailure picks out of a mixed stream.
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { DecodeError, PipelineBuilder, PipelineStallError, TandemError, ThrownValueError } from '../../src/index.ts';
import { FetchError, fetchBytes, isFailure, readTar, SourceError, TarWriter, webDatasetSamples } from '../../src/sources/index.ts';

const streamOf = (bytes: Uint8Array) =>
  new ReadableStream<Uint8Array>({
    start(c) {
      c.enqueue(bytes);
      c.close();
    },
  });

async function tarOf(members: Array<[string, Uint8Array]>): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  const writer = new TarWriter((chunk) => void chunks.push(chunk.slice()));
  for (const [name, data] of members) await writer.add(name, data);
  await writer.end();
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const c of chunks) out.set(c, (at += c.length) - c.length);
  return out;
}

describe('one failure model', () => {
  it('decode, fetch, tar and pipeline errors are TandemErrors tagged by code', async () => {
    expect(new DecodeError('corrupt', 'bad data')).toMatchObject({ code: 'corrupt' });
    expect(new DecodeError('corrupt', 'bad data')).toBeInstanceOf(TandemError);

    // Nothing listens on port 9 of 127.0.0.1: the fetch fails as 'network', with no retries.
    const fetched = await fetchBytes('http://127.0.0.1:9/x', { retries: 0, timeoutMs: 2000 }).catch((e: unknown) => e);
    expect(fetched).toBeInstanceOf(FetchError);
    expect(fetched).toBeInstanceOf(TandemError);
    expect((fetched as FetchError).code).toBe('network');

    const tar = await tarOf([['a.jpg', new Uint8Array(700)]]);
    const cut = tar.subarray(0, 600);
    const readCut = async () => {
      for await (const _ of readTar(streamOf(cut))) {
        // drain
      }
    };
    const tarError = await readCut().catch((e: unknown) => e);
    expect(tarError).toBeInstanceOf(SourceError);
    expect(tarError).toBeInstanceOf(TandemError);
    expect((tarError as SourceError).code).toBe('truncated');

    expect(new PipelineStallError(10, [])).toMatchObject({ code: 'stalled' });
  });

  it('isFailure picks the failures out of a stream of samples and failures', async () => {
    const tar = await tarOf([
      ['one.jpg', new Uint8Array([1])],
      ['two.jpg', new Uint8Array([2])],
      ['two.jpg', new Uint8Array([3])],
    ]);
    const items = [];
    for await (const item of webDatasetSamples(streamOf(tar))) items.push(item);
    const failures = items.filter(isFailure);
    expect(items.filter((i) => !isFailure(i)).map((i) => i.key)).toEqual(['one']);
    expect(failures.map((f) => [f.key, f.stage, f.error.code])).toEqual([['two', 'sample', 'duplicate']]);
    // Plain objects that happen to have an `error` field but no stage are not failures.
    expect(isFailure({ key: 'x', error: new Error('e') })).toBe(false);
  });

  it("a pipeline's failure records are Failed too: the input's key, the stage, an Error (a thrown string becomes a ThrownValueError)", async () => {
    const pipeline = new PipelineBuilder()
      .addSource([{ key: 'a' }, { key: 'b' }, { path: 'c.jpg' }])
      .pipe(
        (x: { key?: string }) => {
          if (x.key === 'a') throw 'not an Error';
          if (x.key === undefined) throw new RangeError('bad');
          return x;
        },
        { name: 'check' },
      )
      .addSink(4)
      .build();
    for await (const _ of pipeline);
    const records = pipeline.failures();
    expect(records.every(isFailure)).toBe(true);
    expect(records.map((r) => [r.key, r.stage, r.error.name])).toEqual([
      ['a', 'check', 'ThrownValueError'],
      ['c.jpg', 'check', 'RangeError'],
    ]);
    expect((records[0]!.error as ThrownValueError).value).toBe('not an Error');
    expect((records[0]!.error as ThrownValueError).code).toBe('non-error-thrown');
  });
});

describe('no plain Error', () => {
  it('src makes no plain Error for a caller to meet (thrown, rejected or delivered): each is a TandemError with a code, a built-in typed error, or an invariant() (InternalError)', async () => {
    const { readdirSync, readFileSync } = await import('node:fs');
    const src = new URL('../../src/', import.meta.url).pathname;
    const plain = readdirSync(src, { recursive: true })
      .map(String)
      .filter((f) => /\.(ts|js)$/.test(f))
      .flatMap((f) =>
        readFileSync(`${src}${f}`, 'utf8')
          .split('\n')
          .map((line, i) => ({ where: `src/${f}:${i + 1}`, line }))
          // Only a `cause` (wrapped by a typed error) or an abort reason (never surfaced) may be plain.
          .filter(({ line }) => /new Error\(/.test(line) && !/cause: new Error\(|abort\(new Error\(/.test(line)),
      )
      .map(({ where, line }) => `${where}: ${line.trim()}`);
    expect(plain).toEqual([]);
  });

  it('src throws and rejects only TandemErrors or the documented built-ins: every `throw`, `Promise.reject(…)` and `reject(…)` checked by its type (TypeScript compiler API)', async () => {
    expect(untypedRaises()).toEqual([]);
  }, 120_000);

  it('what a caller meets carries a code: a pipeline without a source, a released batch, a folder without classes, a foreign state, a broken invariant', async () => {
    const { PipelineBuilder, PipelineBuildError } = await import('../../src/pipeline/index.ts');
    const { DatasetError, DistributedSampler, listImageFolder } = await import('../../src/sources/index.ts');
    const { InternalError, invariant } = await import('../../src/errors/index.ts');
    const { DecodePool, ImageBatcher } = await import('../../src/decode/index.ts');
    const { encodeJpeg, renderSample } = await import('../../src/synthetic/index.ts');
    const { mkdtempSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const codeOf = (f: () => unknown) => {
      try {
        f();
      } catch (e) {
        return e instanceof TandemError ? `${e.name}:${e.code}` : `plain:${String(e)}`;
      }
      return 'no error';
    };
    expect(codeOf(() => new PipelineBuilder().build())).toBe('PipelineBuildError:no-source');
    expect(PipelineBuildError).toBeDefined();
    expect(codeOf(() => invariant(false, 'never'))).toBe('InternalError:internal');
    expect(new InternalError('x')).toBeInstanceOf(TandemError);
    expect(codeOf(() => DistributedSampler.fromState({ kind: 'other' } as never))).toBe('DatasetError:not-a-state');
    const empty = mkdtempSync(join(tmpdir(), 'tandem-empty-'));
    const listed = await listImageFolder(empty).catch((e: unknown) => e);
    expect(listed instanceof DatasetError && listed.code === 'no-classes').toBe(true);

    const pool = await DecodePool.create({ threads: 1 });
    const batcher = new ImageBatcher(pool, { batchSize: 1, height: 8, width: 8, buffers: 2 });
    try {
      const s = renderSample(1, 0, { width: 16, height: 12 });
      const stage = batcher.decodeStage({ bytes: encodeJpeg(s.rgb, s.width, s.height), key: 'a' });
      const token = (await stage.next()).value;
      const batch = token && batcher.aggregator().push(token);
      expect(batch).toBeDefined();
      batch!.release();
      expect(codeOf(() => batch!.data)).toBe('BatchReleasedError:batch-released');
      expect(codeOf(() => batch!.release())).toBe('BatchReleasedError:batch-released');
    } finally {
      batcher.close();
      await pool.close();
    }
  });
});

/**
 * Built-ins a caller may meet: RangeError and TypeError for the low-level helpers' wrong arguments
 * (docs/errors.md), DOMException for an AbortSignal's reason. Anything else raised must be a
 * TandemError. Internal classes that never leave their module are named here with why.
 */
const ALLOWED_BUILT_INS = new Set(['RangeError', 'TypeError', 'DOMException']);
const INTERNAL_ONLY: Record<string, string> = {
  // src/sources/urls.ts: one attempt's failure, caught by the retry loop and wrapped in a FetchError.
  AttemptError: 'caught by the retry loop and wrapped in a FetchError',
  // src/text/tokenize-worker.js: a document's coded failure inside a tokenizer worker, caught there
  // and sent to the host as { code, message }, which raises it as a TextError.
  WorkerTextError: 'caught in the tokenizer worker and raised on the host as a TextError',
};

/**
 * Each raise in src/ whose error is not allowed, as "file:line: text (type)". What is raised is
 * judged by its static type: a `new X(...)` must be an allowed class; any other expression is
 * judged only when its type is a class declared in src/ (a plain `Error` passed on from a caller or
 * a catch is the caller's own and is not Tandem's to retype).
 */
function untypedRaises(): string[] {
  const root = new URL('../../', import.meta.url).pathname;
  const config = ts.getParsedCommandLineOfConfigFile(
    `${root}tsconfig.json`,
    {},
    { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} },
  );
  if (!config) throw new TypeError('tsconfig.json could not be read');
  const files = config.fileNames.filter((f) => f.startsWith(`${root}src/`));
  const program = ts.createProgram(files, { ...config.options, allowJs: true, checkJs: false });
  const checker = program.getTypeChecker();
  const ancestry = (type: ts.Type): string[] => {
    const names: string[] = [];
    const visit = (t: ts.Type) => {
      const symbol = t.getSymbol();
      if (symbol) names.push(symbol.getName());
      // A generic base (CodedError<Code>) is a reference to its class; the class has the bases.
      const target =
        t.flags & ts.TypeFlags.Object && (t as ts.ObjectType).objectFlags & ts.ObjectFlags.Reference ? (t as ts.TypeReference).target : t;
      if (target.isClassOrInterface()) for (const base of checker.getBaseTypes(target)) visit(base);
    };
    const symbol = type.getSymbol();
    visit(symbol ? checker.getDeclaredTypeOfSymbol(symbol) : type);
    return names;
  };
  const declaredInSrc = (type: ts.Type) =>
    type.getSymbol()?.declarations?.some((d) => d.getSourceFile().fileName.startsWith(`${root}src/`) && ts.isClassDeclaration(d)) ?? false;
  const found: string[] = [];
  const judge = (expression: ts.Expression, at: ts.SourceFile) => {
    const type = checker.getTypeAtLocation(expression);
    if (!ts.isNewExpression(expression) && !declaredInSrc(type)) return;
    const names = ancestry(type);
    if (names.includes('TandemError') || ALLOWED_BUILT_INS.has(names[0] ?? '') || (names[0] ?? '') in INTERNAL_ONLY) return;
    const { line } = at.getLineAndCharacterOfPosition(expression.getStart(at));
    found.push(
      `${at.fileName.slice(root.length)}:${line + 1}: ${expression.getText(at).replace(/\s+/g, ' ').slice(0, 80)} (${names.join(' < ') || checker.typeToString(type)})`,
    );
  };
  for (const file of program.getSourceFiles()) {
    if (!file.fileName.startsWith(`${root}src/`)) continue;
    const walk = (node: ts.Node): void => {
      if (ts.isThrowStatement(node)) judge(node.expression, file);
      else if (ts.isCallExpression(node) && node.arguments[0]) {
        const callee = node.expression.getText(file);
        if (callee === 'Promise.reject' || callee === 'reject' || /(^|\.)reject$/.test(callee)) judge(node.arguments[0], file);
      }
      ts.forEachChild(node, walk);
    };
    walk(file);
  }
  return found;
}
