#!/usr/bin/env node
// The `tandem` command line (Node: dist/cli/main.js; Deno: deno run -A src/cli/main.ts).
import { commandLineArgs, finishProcess } from '../runtime/index.ts';
import { runCommand } from './commands.ts';

runCommand(commandLineArgs()).then(finishProcess, (error: unknown) => {
  console.error(error instanceof Error ? (error.stack ?? error.message) : error);
  finishProcess(1);
});
