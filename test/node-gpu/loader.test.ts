import { expect, it } from 'vitest';
import { loaderAccountsForEveryItem } from '../shared/loader-scenarios.ts';

it('the loader pipeline delivers every good image once and reports every bad one', async () => {
  expect(await loaderAccountsForEveryItem()).toEqual({ delivered: 56, failed: 4 });
});
