// The text kill test (test/shared/text-kill-scenarios.ts) with `tandem` run by Deno from src/.
import './limits.ts';
import { DENO_CLI, killedTextRunsResumeExactly } from '../shared/text-kill-scenarios.ts';

// TANDEM_TEXT_KILL_RUNS can only raise the count.
const kills = Math.max(3, Number(Deno.env.get('TANDEM_TEXT_KILL_RUNS')) || 0);

Deno.test(`tandem train --text in Deno with Llama 2's tokenizer.json (tokenised in workers), SIGKILLed ${kills} times, one in a checkpoint write, each resumed with --resume: the final checkpoint byte for byte the uninterrupted run's; other pack, seq-len and tokenizer refused by name`, async () => {
  const r = await killedTextRunsResumeExactly(DENO_CLI(Deno.execPath()), { kills, seed: 12, pack: 'best-fit' });
  if (r.resumedAt.length !== kills) throw new Error(`${r.resumedAt.length} resumes of ${kills} kills`);
  console.log(
    `[text kill] Deno, best-fit: resumed at steps ${r.resumedAt.join(', ')}; ${r.midWrite} in a write; an uninterrupted run takes ${r.uninterruptedSeconds.toFixed(1)} s\n  ${r.refusals.join('\n  ')}`,
  );
});
