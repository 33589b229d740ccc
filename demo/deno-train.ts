// Train the tiny ViT from a folder of images (one subfolder per class), or from the generated
// dataset, in Deno — the same session, progress and reports as `tandem train` in Node:
//   npx deno run -A demo/deno-train.ts [--data DIR] [--epochs N] [--images N] [--report FILE]
// (all of `tandem train --help`'s options). Writes the JSON report and the HTML page next to it.
import { runCommand } from '../src/cli/commands.ts';

declare const Deno: { args: string[]; exit(code: number): never };

const code = await runCommand(['train', ...Deno.args]);
if (code !== 0) Deno.exit(code);
