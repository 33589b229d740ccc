// Chromium tier: every decode pool scenario on the workers fallback, and the scenarios that compare
// the modes. This page is cross-origin isolated, so the fallback is forced here; the demo's
// end-to-end test loads a page without isolation, where DecodePool picks it by itself.
import { describe } from 'vitest';
import { fallbackSuite } from '../shared/fallback-suite.ts';

describe('fallback decode pool: single-threaded instances in module workers (Chromium)', () => {
  fallbackSuite();
});
