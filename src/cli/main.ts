#!/usr/bin/env node
// The `tandem` command line (Node: dist/cli/main.js; Deno: deno run -A src/cli/main.ts).
import { commandLineArgs, finishProcess, rerunWithFilteredStderr } from '../runtime/index.ts';
import { UsageError } from './args.ts';
import { runCommand } from './commands.ts';

// A failure is one line naming the problem (the stack only with --verbose); usage errors exit 2.
const args = commandLineArgs();
// dawn.node's adapter warnings (limits it lowers on CPU drivers) stay off the terminal unless
// --verbose: they are written natively to stderr, so a Node run filters its own stderr.
const ADAPTER_WARNING = /^Warning: \w+ artificially reduced from \d+ to \d+/;
const filtered = args.includes('--verbose') || args.includes('--help') ? undefined : await rerunWithFilteredStderr(ADAPTER_WARNING);
if (filtered !== undefined) finishProcess(filtered);
else
  runCommand(args).then(finishProcess, (error: unknown) => {
    const verbose = args.includes('--verbose');
    const usage = error instanceof UsageError;
    const text = error instanceof Error ? (verbose ? (error.stack ?? error.message) : error.message) : String(error);
    console.error(`tandem: ${usage ? '' : 'error: '}${text}`);
    finishProcess(usage ? 2 : 1);
  });
