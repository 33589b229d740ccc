// Regression for the abort at exit under `deno test` (docs/reliability.md): Deno's WebGPU, left
// to start every backend, loads Mesa's GL stack next to Vulkan, and about 1 exit in 30 then
// aborted in glibc's malloc. Tandem limits Deno's WebGPU to Vulkan before the first adapter; this
// runs a GPU test through Tandem in fresh `deno test` processes, two at a time, with
// DENO_WEBGPU_BACKEND unset, and requires every one to exit cleanly. With the avoidance turned
// off, this child aborted in 3 of 200 runs (1.5%; the standalone repro under load: 3-4%), so 150
// runs catch a return of the old behaviour about 9 times in 10 (~2 min on 2 cores).
// TANDEM_EXIT_RUNS changes the count for a longer hunt.
import './limits.ts';
const RUNS = Number(Deno.env.get('TANDEM_EXIT_RUNS') ?? 150);
const child = new URL('./gpu-exit-child.ts', import.meta.url).pathname;

async function runChild(): Promise<{ code: number; signal: string | null; tail: string }> {
  const env = Deno.env.toObject();
  delete env.DENO_WEBGPU_BACKEND; // this process's own GPU tests set it; the child must decide for itself
  const out = await new Deno.Command(Deno.execPath(), {
    args: ['test', '-A', '--no-check', child],
    clearEnv: true,
    env,
    stdout: 'piped',
    stderr: 'piped',
  }).output();
  const text = new TextDecoder().decode(out.stderr) + new TextDecoder().decode(out.stdout);
  return { code: out.code, signal: out.signal, tail: text.trim().split('\n').slice(-2).join(' | ') };
}

Deno.test(`${RUNS} deno test processes that use the GPU through Tandem all exit cleanly`, async () => {
  const failures: string[] = [];
  let next = 0;
  const worker = async () => {
    while (next < RUNS) {
      const run = next++;
      const r = await runChild();
      if (r.code !== 0) failures.push(`run ${run}: exit ${r.code}${r.signal ? ` (${r.signal})` : ''}: ${r.tail}`);
    }
  };
  await Promise.all([worker(), worker()]);
  if (failures.length) throw new Error(`${failures.length} of ${RUNS} runs did not exit cleanly:\n${failures.join('\n')}`);
});
