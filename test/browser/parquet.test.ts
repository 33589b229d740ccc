// Chromium tier: Parquet datasets and the Hub's listings (test/shared/parquet-scenarios.ts). The
// page has no folder to write to: each scenario's files are Files of the same bytes. The mock Hub
// and its storage host run in the page behind 127.0.0.1 relay servers (test/browser-setup/), so
// every Hub read is a cross-origin fetch: CORS preflights for Range and Authorization, redirects
// from the Hub to the storage host.
import { describe, test } from 'vitest';
import { relayServe } from '../browser-setup/serve.ts';
import { parquetScenarios } from '../shared/parquet-scenarios.ts';

const place = async (name: string, bytes: Uint8Array) => new File([bytes.slice()], name);

describe('Parquet datasets and the Hub (Chromium)', () => {
  for (const [name, body] of Object.entries(parquetScenarios(relayServe, { place }))) test(name, body, 120_000);
});
