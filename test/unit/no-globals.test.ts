// Importing Tandem changes no global: every door of the package is imported here, and the global
// object's and Symbol's own properties are compared before and after ("sideEffects": false).
import { expect, it } from 'vitest';

const DOORS = [
  () => import('../../src/index.ts'),
  () => import('../../src/pipeline/index.ts'),
  () => import('../../src/decode/index.ts'),
  () => import('../../src/gpu/index.ts'),
  () => import('../../src/sources/index.ts'),
  () => import('../../src/train/index.ts'),
  () => import('../../src/vit/index.ts'),
  () => import('../../src/tfjs/index.ts'),
  () => import('../../src/onnx/index.ts'),
  () => import('../../src/jax/index.ts'),
  () => import('../../src/vite/index.ts'),
];

it('importing every door of the package defines no global and touches no built-in', async () => {
  const before = { global: Reflect.ownKeys(globalThis), symbol: Reflect.ownKeys(Symbol), asyncDispose: Symbol.asyncDispose };
  for (const door of DOORS) await door();
  expect(Reflect.ownKeys(globalThis)).toEqual(before.global);
  expect(Reflect.ownKeys(Symbol)).toEqual(before.symbol);
  expect(Symbol.asyncDispose).toBe(before.asyncDispose);
});
