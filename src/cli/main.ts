#!/usr/bin/env node
// The `tandem` command line (Node: dist/cli/main.js; Deno: deno run -A src/cli/main.ts).
import { commandLineArgs, finishProcess } from '../runtime/index.ts';
import { UsageError } from './args.ts';
import { runCommand } from './commands.ts';

// A failure is one line naming the problem (the stack only with --verbose); usage errors exit 2.
const args = commandLineArgs();
runCommand(args).then(finishProcess, (error: unknown) => {
  const verbose = args.includes('--verbose');
  const usage = error instanceof UsageError;
  const text = error instanceof Error ? (verbose ? (error.stack ?? error.message) : error.message) : String(error);
  console.error(`tandem: ${usage ? '' : 'error: '}${text}`);
  finishProcess(usage ? 2 : 1);
});
