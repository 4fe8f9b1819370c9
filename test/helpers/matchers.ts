// Vitest's asymmetric matchers typed `unknown` instead of `any` (vitest keeps `any` on purpose, vitest-dev/vitest#4543):
// inside an expected object an `any` is what the type-aware lint reports as an unsafe assignment.
import { expect } from 'vitest';

export const match = {
  any: (constructor: unknown): unknown => expect.any(constructor),
  stringMatching: (pattern: string | RegExp): unknown => expect.stringMatching(pattern),
  stringContaining: (text: string): unknown => expect.stringContaining(text),
  arrayContaining: (items: unknown[]): unknown => expect.arrayContaining(items),
  objectContaining: (object: object): unknown => expect.objectContaining(object),
};
