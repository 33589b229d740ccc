// Chromium tier: the loader contract (test/shared/loader-contract-scenarios.ts) against loader(),
// videoLoader() and textLoader(), on one pthreads pool (test/shared/contract-suite.ts).
import { fetchFixture } from '../shared/browser-fixtures.ts';
import { contractSuite } from '../shared/contract-suite.ts';

contractSuite(fetchFixture);
