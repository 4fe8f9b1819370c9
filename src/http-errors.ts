// Outside /api/v1 (Twilio's callbacks, the internal listener): @fastify/sensible's HTTP errors, answered in the same
// envelope as the API's ({ success: false, error }). The exact-message table of src/errors.ts stays the API's.
import sensible from '@fastify/sensible';
import type { FastifyInstance } from 'fastify';

/**
 * Gives `scope` sensible's `httpErrors` and reply helpers, and answers the client errors they make with the envelope.
 * Any other error goes on to the parent scope's handler (the errors plugin: 503 for a database outage, 500 hides details).
 */
export async function useHttpErrors(scope: FastifyInstance): Promise<void> {
  // Registered once per instance: a scope below one that has it already inherits it.
  if (!scope.hasDecorator('httpErrors')) await scope.register(sensible);
  scope.setErrorHandler((error, _request, reply) => {
    if (!(error instanceof scope.httpErrors.HttpError) || !error.expose) throw error;
    return reply
      .code(error.statusCode)
      .type('application/json; charset=utf-8')
      .send({ success: false, error: error.message });
  });
}
