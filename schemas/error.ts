// The error envelope every non-2xx response of the API has.
import { Type, type Static } from '@sinclair/typebox';

export const ErrorResponse = Type.Object(
  {
    success: Type.Literal(false, { description: 'Always false on errors' }),
    error: Type.String({ description: 'Human-readable message' }),
  },
  { $id: 'ErrorResponse', additionalProperties: false, description: 'Error envelope' },
);
export type ErrorResponse = Static<typeof ErrorResponse>;
