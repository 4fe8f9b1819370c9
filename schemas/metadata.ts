// A call's metadata as published: the trigger's key-value pairs, unchanged. A leaf (schemas/call.ts and
// schemas/agent-runtime.ts both read it).
import { Type } from '@sinclair/typebox';

export const Metadata = Type.Record(
  Type.String(),
  Type.Union([Type.String(), Type.Number(), Type.Boolean(), Type.Null()]),
  {
    description: 'Arbitrary key-value pairs given at trigger time, unchanged',
  },
);
