import './limits.ts';
import { loaderAccountsForEveryItem } from '../shared/loader-scenarios.ts';

Deno.test('the loader pipeline delivers every good image once and reports every bad one', async () => {
  const r = await loaderAccountsForEveryItem();
  if (r.delivered !== 56 || r.failed !== 4) throw new Error(JSON.stringify(r));
});
