import { shortTrainingRunReports } from '../shared/train-scenarios.ts';

declare const Deno: { makeTempDir(): Promise<string>; test(name: string, fn: () => Promise<void>): void };

Deno.test('tandem train runs end to end in Deno and writes its JSON and HTML reports', async () => {
  await shortTrainingRunReports(await Deno.makeTempDir());
});
