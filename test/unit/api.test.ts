// The public types, pinned: for each door of package.json's exports, every exported name with its
// type as the compiler sees it (classes member by member, interfaces field by field), compared
// with test/unit/api-report.txt. A change to what users can call or read shows up in review as a
// change to that file. TANDEM_UPDATE_DOORS=1 rewrites it (as it does doors.json).
import { readFileSync, writeFileSync } from 'node:fs';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const root = new URL('../../', import.meta.url).pathname;
const reportPath = new URL('./api-report.txt', import.meta.url);
const flags = ts.TypeFormatFlags.NoTruncation | ts.TypeFormatFlags.UseFullyQualifiedType | ts.TypeFormatFlags.WriteArrowStyleSignature;

function report(): string {
  const pkg = JSON.parse(readFileSync(`${root}package.json`, 'utf8')) as { exports: Record<string, unknown> };
  const doors = Object.keys(pkg.exports).map((entry) => (entry === '.' ? 'index' : `${entry.slice(2)}/index`));
  const config = ts.getParsedCommandLineOfConfigFile(
    `${root}tsconfig.json`,
    {},
    { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} },
  );
  if (!config) throw new Error('tsconfig.json could not be read');
  const program = ts.createProgram(
    doors.map((d) => `${root}src/${d}.ts`),
    config.options,
  );
  const checker = program.getTypeChecker();
  const clean = (text: string) =>
    text
      .replace(/import\("[^"]*\/src\/([^"]+)"\)\./g, '')
      // A dependency's type is named by its package path, so the report does not depend on where the repository sits.
      .replace(/import\("[^"]*\/node_modules\/([^"]+)"\)/g, 'import("$1")')
      .replace(/\s+/g, ' ');
  const typeText = (type: ts.Type) => clean(checker.typeToString(type, undefined, flags));
  const members = (type: ts.Type, at: ts.Node) =>
    checker
      .getPropertiesOfType(type)
      .filter((p) => !p.name.startsWith('#') && p.name !== 'prototype' && !isPrivate(p) && !fromLibrary(p))
      .map(
        (p) =>
          `    ${p.name.replace(/^__@(\w+)@\d+$/, '[Symbol.$1]')}${p.flags & ts.SymbolFlags.Optional ? '?' : ''}: ${typeText(checker.getTypeOfSymbolAtLocation(p, at))}`,
      )
      .sort();
  const lines: string[] = [];
  for (const door of doors) {
    lines.push(`## ${door === 'index' ? 'tandem' : `tandem/${door.replace('/index', '')}`}`);
    const file = program.getSourceFile(`${root}src/${door}.ts`);
    const moduleSymbol = file && checker.getSymbolAtLocation(file);
    if (!file || !moduleSymbol) throw new Error(`no module for ${door}`);
    const exported = checker.getExportsOfModule(moduleSymbol).sort((a, b) => (a.name < b.name ? -1 : 1));
    for (const alias of exported) {
      const symbol = alias.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(alias) : alias;
      const at = symbol.declarations?.[0] ?? file;
      if (symbol.flags & ts.SymbolFlags.Class) {
        const statics = checker.getTypeOfSymbolAtLocation(symbol, at);
        const constructors = statics
          .getConstructSignatures()
          .map((s) => `    new ${clean(checker.signatureToString(s, undefined, flags))}`);
        lines.push(`  class ${alias.name}`, ...constructors, ...members(statics, at).map((m) => `    static${m.slice(3)}`));
        lines.push(...members(checker.getDeclaredTypeOfSymbol(symbol), at));
      } else if (symbol.flags & ts.SymbolFlags.Interface) {
        lines.push(`  interface ${alias.name}`, ...members(checker.getDeclaredTypeOfSymbol(symbol), at));
      } else if (symbol.flags & ts.SymbolFlags.TypeAlias) {
        const declared = checker.getDeclaredTypeOfSymbol(symbol);
        const text = clean(checker.typeToString(declared, undefined, flags | ts.TypeFormatFlags.InTypeAlias));
        lines.push(`  type ${alias.name} = ${text.length > 400 ? `${text.slice(0, 400)}…` : text}`);
      } else {
        lines.push(
          `  ${symbol.flags & ts.SymbolFlags.Function ? 'function' : 'const'} ${alias.name}: ${typeText(checker.getTypeOfSymbolAtLocation(symbol, at))}`,
        );
      }
    }
  }
  return `${lines.join('\n')}\n`;
}

/** Members that come from the platform's types (Error's stack, Node's captureStackTrace): not Tandem's API. */
function fromLibrary(symbol: ts.Symbol): boolean {
  const files = symbol.declarations?.map((d) => d.getSourceFile().fileName) ?? [];
  return files.length > 0 && files.every((f) => f.includes('/node_modules/'));
}

function isPrivate(symbol: ts.Symbol): boolean {
  const modifiers = symbol.declarations?.flatMap((d) => (ts.canHaveModifiers(d) ? (ts.getModifiers(d) ?? []) : []));
  return modifiers?.some((m) => m.kind === ts.SyntaxKind.PrivateKeyword || m.kind === ts.SyntaxKind.ProtectedKeyword) ?? false;
}

describe('the public types (package.json exports)', () => {
  it('each door exports the names and types of test/unit/api-report.txt', () => {
    const actual = report();
    if (process.env.TANDEM_UPDATE_DOORS === '1') writeFileSync(reportPath, actual);
    expect(actual).toBe(readFileSync(reportPath, 'utf8'));
  }, 120_000);
});
