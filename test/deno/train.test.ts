import { shortTrainingRunReports } from '../shared/train-scenarios.ts';

Deno.test('tandem train runs end to end in Deno', async () => {
  await shortTrainingRunReports();
});
