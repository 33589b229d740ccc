/**
 * Deno's WebGPU (wgpu) starts every backend it was built with when its instance is created: on
 * Linux that is Vulkan and also OpenGL through EGL, which loads Mesa's GL driver (llvmpipe and
 * its threads) even when the adapter in use is Vulkan. Under `deno test`, about 1 exit in 25
 * then aborts in glibc's malloc ("double free or corruption", "malloc_consolidate(): invalid
 * chunk size") while the exit handlers unload that GL stack and the test thread is torn down;
 * with the instance limited to Vulkan it never did (docs/reliability.md; the standalone repro is
 * in test/deno/repro/). So, where Vulkan drivers are installed and the user has not chosen,
 * Tandem limits Deno's WebGPU to Vulkan before the instance exists. Setting DENO_WEBGPU_BACKEND
 * yourself (any value) turns this off; without env permission nothing is changed.
 */
interface DenoEnvApi {
  env: { get(name: string): string | undefined; set(name: string, value: string): void };
  permissions: { querySync?(descriptor: { name: string; variable?: string; path?: string }): { state: string } };
  readDirSync(path: string): Iterable<{ name: string }>;
  build: { os: string };
}

const ICD_DIRS = ['/usr/share/vulkan/icd.d', '/etc/vulkan/icd.d', '/usr/local/share/vulkan/icd.d'];

export function preferVulkanInDeno(deno: DenoEnvApi): 'set' | 'kept' {
  try {
    if (deno.build.os !== 'linux') return 'kept';
    const granted = (descriptor: { name: string; variable?: string; path?: string }) =>
      deno.permissions.querySync?.(descriptor).state === 'granted';
    if (!granted({ name: 'env', variable: 'DENO_WEBGPU_BACKEND' }) || deno.env.get('DENO_WEBGPU_BACKEND') !== undefined) return 'kept';
    if (!hasVulkanDriver(deno, granted)) return 'kept';
    deno.env.set('DENO_WEBGPU_BACKEND', 'vulkan');
    return 'set';
  } catch {
    return 'kept'; // a sandbox that refuses the checks keeps Deno's own choice
  }
}

function hasVulkanDriver(deno: DenoEnvApi, granted: (d: { name: string; variable?: string; path?: string }) => boolean): boolean {
  for (const variable of ['VK_ICD_FILENAMES', 'VK_DRIVER_FILES']) {
    if (granted({ name: 'env', variable }) && deno.env.get(variable)) return true;
  }
  for (const dir of ICD_DIRS) {
    if (!granted({ name: 'read', path: dir })) continue;
    try {
      for (const entry of deno.readDirSync(dir)) if (entry.name.endsWith('.json')) return true;
    } catch {
      // no such folder
    }
  }
  return false;
}
