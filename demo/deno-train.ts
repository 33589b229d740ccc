// Train the tiny ViT from a folder of images (one subfolder per class), or from the generated
// dataset, in Deno — the same loader and trainer as `tandem train` in Node:
//   npx deno run -A demo/deno-train.ts [--data DIR] [--epochs N] [--images N] [--report FILE]
// Progress, the per-stage summary and the JSON report are the CLI's own.
import '../src/cli/main.ts';
