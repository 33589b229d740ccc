// The generated media fixtures (scripts/make-fixtures.sh) as the Chromium tier reads them: served by
// the vite dev server from test/fixtures/generated, which also answers Range requests.
import type { FixtureLoader } from './media-scenarios.ts';

/** A fixture's URL on the vite dev server. */
export const fixtureUrl = (name: string): string => `/test/fixtures/generated/${name}`;

/** A fixture's bytes, fetched from the vite dev server; a missing one fails with its name. */
export const fetchFixture: FixtureLoader = async (name) => {
  const response = await fetch(fixtureUrl(name));
  if (!response.ok) throw new Error(`fixture ${name}: HTTP ${response.status}; run scripts/make-fixtures.sh`);
  return new Uint8Array(await response.arrayBuffer());
};
