// Keeps demo/notebook.ipynb working: its code cells, with the `parameters` cell replaced by small
// settings, run as one module in Deno (the notebook's folder, so its relative imports resolve).
import './limits.ts';
declare const Deno: {
  readTextFile(path: string | URL): Promise<string>;
  writeTextFile(path: string | URL, text: string): Promise<void>;
  remove(path: string | URL): Promise<void>;
  test(name: string, fn: () => Promise<void>): void;
};

interface Cell {
  cell_type: string;
  source: string[];
  metadata: { tags?: string[] };
}

const SMALL = 'const images = 64;\nconst epochs = 2;\nconst batchSize = 16;';

Deno.test('demo/notebook.ipynb: its cells run as a script and train', async () => {
  const notebook = JSON.parse(await Deno.readTextFile(new URL('../../demo/notebook.ipynb', import.meta.url))) as { cells: Cell[] };
  const code = notebook.cells.filter((c) => c.cell_type === 'code');
  if (!code.some((c) => c.metadata.tags?.includes('parameters'))) throw new Error('the notebook has no parameters cell');
  const script =
    code.map((c) => (c.metadata.tags?.includes('parameters') ? SMALL : c.source.join(''))).join('\n\n') + '\n\nexport { report };\n';
  const path = new URL(`../../demo/.notebook-run-${Date.now()}.ts`, import.meta.url);
  await Deno.writeTextFile(path, script);
  try {
    const { report } = (await import(path.href)) as { report: { steps: number; epochs: { valAccuracy: number }[]; failures: number } };
    if (report.steps !== 7) throw new Error(`52 training images × 2 epochs / 16 = 7 steps, got ${report.steps}`);
    if (report.epochs.length !== 2 || report.failures !== 0) throw new Error(`epochs ${report.epochs.length}, failures ${report.failures}`);
  } finally {
    await Deno.remove(path);
  }
});
