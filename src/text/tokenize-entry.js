// @ts-check
/**
 * The tokenizer stage's worker script: the pipeline's worker bootstrap with tokenize-worker.js
 * registered, both imported statically. tokenizer.ts starts it as
 * `new Worker(new URL('./tokenize-entry.js', import.meta.url), { type: 'module' })`, so that a
 * bundled app (Vite, webpack) bundles this worker together with `@huggingface/tokenizers`; a module
 * the bootstrap imported by URL at run time would keep that bare import, which no browser resolves.
 */
import { registerTaskModule } from '../pipeline/worker-bootstrap.js';
import * as tokenize from './tokenize-worker.js';

registerTaskModule(tokenize);
