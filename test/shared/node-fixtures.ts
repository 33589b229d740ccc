// The generated media fixtures (scripts/make-fixtures.sh) as the Node tiers read them. Node only
// (node:fs): the browser tier fetches them (browser-fixtures.ts), Deno reads them with Deno.readFile.
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { FixtureLoader } from './media-scenarios.ts';

/** A fixture's URL in test/fixtures/generated. */
export const fixtureUrl = (name: string): URL => new URL(`../fixtures/generated/${name}`, import.meta.url);

/** A fixture's path in test/fixtures/generated. */
export const fixturePath = (name: string): string => fileURLToPath(fixtureUrl(name));

/** A fixture's bytes, read from test/fixtures/generated. */
export const loadFixture: FixtureLoader = async (name) => new Uint8Array(await readFile(fixtureUrl(name)));
