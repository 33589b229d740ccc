// Throwaway projects outside the repository that install Tandem the way users do: `npm pack` of
// this checkout, then `npm install` of the tarball (and Vite) into a fresh folder. Both are cached
// by a key of what went into them, so a second run packs nothing and sends no install requests.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { encodeJpeg, renderSample } from '../../src/synthetic/index.ts';

export const repoRoot = new URL('../../', import.meta.url).pathname;
const VITE_VERSION = (JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { devDependencies: Record<string, string> })
  .devDependencies.vite!;

/** The second bundler users have: webpack 5 and its CLI, as a fresh app would pin them. */
const WEBPACK_VERSIONS = { webpack: '5.112.2', 'webpack-cli': '7.3.1' };

export function run(cmd: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = {}): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolve, reject) =>
    execFile(cmd, args, { cwd, env: { ...process.env, ...env }, maxBuffer: 16 << 20, timeout: 300_000 }, (error, stdout, stderr) =>
      error
        ? reject(new Error(`${cmd} ${args.join(' ')} (in ${cwd}) failed: ${error.message}\n${stdout}\n${stderr}`))
        : resolve({ stdout, stderr }),
    ),
  );
}

/** What the package is made of: the built library, the wasm modules and the manifest. */
function packageKey(): string {
  const hash = createHash('sha256');
  for (const file of ['dist/.build-key', 'wasm/dist/.build-key', 'package.json']) hash.update(readFileSync(join(repoRoot, file)));
  return hash.digest('hex').slice(0, 16);
}

/** The tarball `npm pack` makes of this checkout (built with scripts/setup.sh first). */
export async function packTarball(): Promise<string> {
  const dir = join(tmpdir(), `tandem-consumer-${packageKey()}`);
  const tarball = join(dir, 'tandem.tgz');
  if (existsSync(tarball)) return tarball;
  mkdirSync(dir, { recursive: true });
  const { stdout } = await run('npm', ['pack', '--pack-destination', dir, '--json'], repoRoot);
  const [{ filename }] = JSON.parse(stdout) as [{ filename: string }];
  cpSync(join(dir, filename), tarball);
  return tarball;
}

/** A fresh project with the tarball (and Vite, when asked) installed; reused while its key holds. */
/** The version of a package this repository develops against (so the consumer installs come from npm's cache). */
export function devVersion(name: string): string {
  const version = (JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { devDependencies: Record<string, string> })
    .devDependencies[name];
  if (!version) throw new Error(`${name} is not a devDependency`);
  return version;
}

export async function project(
  name: string,
  files: string,
  options: { vite?: boolean; webpack?: boolean; packages?: string[] } = {},
): Promise<string> {
  const tarball = await packTarball();
  const dir = join(tarball, '..', name);
  const dependencies: Record<string, string> = { tandem: `file:${tarball}` };
  if (options.vite) dependencies.vite = VITE_VERSION;
  if (options.webpack) Object.assign(dependencies, WEBPACK_VERSIONS);
  for (const name of options.packages ?? []) dependencies[name] = devVersion(name);
  const manifest = JSON.stringify({ name: `consumer-${name}`, private: true, type: 'module', dependencies }, null, 2);
  const stamp = join(dir, 'node_modules', '.consumer-key');
  if (!existsSync(stamp) || readFileSync(stamp, 'utf8') !== manifest) {
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'package.json'), manifest);
    await run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error'], dir);
    writeFileSync(stamp, manifest);
  }
  cpSync(join(repoRoot, 'examples', files), dir, { recursive: true });
  writeImages(dir, options.vite ? join(dir, 'public') : dir);
  return dir;
}

/** photo.jpg and 8 JPEGs in two classes: images/<class>/<n>.jpg, and images/<n>.jpg for pages. */
function writeImages(dir: string, root: string): void {
  if (existsSync(join(root, 'photo.jpg'))) return;
  mkdirSync(join(root, 'images', 'a'), { recursive: true });
  mkdirSync(join(root, 'images', 'b'), { recursive: true });
  const jpeg = (i: number) => {
    const s = renderSample(7, i, { width: 320, height: 240, classes: 2 });
    return encodeJpeg(s.rgb, s.width, s.height, { quality: 90 });
  };
  writeFileSync(join(root, 'photo.jpg'), jpeg(99));
  for (let i = 0; i < 8; i++) {
    writeFileSync(join(root, 'images', `${i}.jpg`), jpeg(i));
    writeFileSync(join(root, 'images', i % 2 ? 'b' : 'a', `${i}.jpg`), jpeg(i));
  }
  void dir;
}

/** Files the tarball holds, from `npm pack --dry-run`. */
export async function packedFiles(): Promise<string[]> {
  const { stdout } = await run('npm', ['pack', '--dry-run', '--json'], repoRoot);
  const [{ files }] = JSON.parse(stdout) as [{ files: { path: string }[] }];
  return files.map((f) => f.path);
}

export const listFiles = (dir: string): string[] => readdirSync(dir, { recursive: true }).map(String);
