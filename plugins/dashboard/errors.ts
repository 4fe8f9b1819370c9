// The dashboard's one error handler: a refused form (a validation failure, an AdminError from src/admin, a route's
// FormProblem) goes back to the form it came from, as the route's config says (`formFailure`), with its problem next
// to the field; anything else is the HTML error page. No handler catches these itself.
import fp from 'fastify-plugin';
import type { FastifyError, FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import { AdminError } from '../../src/admin/errors.js';
import { FORM_NOT_VALID, FormProblem, type FormFailure } from '../../src/views/form-problem.js';
import { clearHeadersForError } from '../errors.js';
import { isBusy } from './busy.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * The page a refused form shows again: called by the error handler with the problem in words. A route with it
     * and `attachValidation: true` resolves its guards and `:id` first, so another tenant's object stays a 404 even
     * for a form that does not validate.
     */
    formFailure?: (request: FastifyRequest, reply: FastifyReply, failure: FormFailure) => unknown;
  }
}

const ERROR_TITLES: Record<number, string> = {
  400: 'Bad request',
  403: 'Not allowed',
  404: 'Page not found',
  405: 'Not allowed',
  413: 'Too large',
  415: 'Not a form',
  429: 'Too many attempts',
};

/**
 * The refusal `error` is, in the words and status its form shows; null for any other error. A validation failure only
 * on a route that attaches it (its guards and `:id` ran); elsewhere it stays the plain 400 page it always was.
 */
function failureOf(request: FastifyRequest, error: FastifyError | Error): FormFailure | null {
  const { message } = error;
  if (error instanceof FormProblem)
    return { message, status: error.status, error, invalid: false, by: 'route', fields: error.fields };
  if (error instanceof AdminError) return { message, status: 400, error, invalid: false, by: 'admin', fields: {} };
  if ('validation' in error && error.validation && request.routeOptions.attachValidation)
    return { message: FORM_NOT_VALID, status: 400, error, invalid: true, by: 'schema', fields: {} };
  return null;
}

export default fp(
  async (fastify) => {
    // A route that words its refused forms: its validation failure reaches the handler below once its preHandlers
    // (guards, `:id`) have run, as it reached the handler itself before.
    fastify.addHook('onRoute', (route: RouteOptions) => {
      if (!route.attachValidation || !route.config?.formFailure) return;
      const handler = route.handler;
      route.handler = function (request, reply) {
        if (request.validationError) throw request.validationError;
        return handler.call(this, request, reply);
      };
    });

    fastify.setErrorHandler(async (caught: FastifyError, request, reply) => {
      let error = caught;
      if (isBusy(error)) return reply.busy(error);
      const formFailure = request.routeOptions.config.formFailure;
      const failure = formFailure ? failureOf(request, error) : null;
      if (formFailure && failure) {
        try {
          return await formFailure(request, reply, failure);
        } catch (thrown) {
          // A page that answers a refusal with an HTTP error (a 404 for what is gone): the error page below.
          error = thrown as FastifyError;
        }
      }
      const status = error.statusCode && error.statusCode >= 400 ? error.statusCode : 500;
      if (status >= 500) request.log.error({ err: error }, 'dashboard error');
      // The CSRF plugin's own messages are for developers; people get one sentence that says what to do.
      const message = error.code?.startsWith('FST_CSRF')
        ? 'This form has expired. Go back, reload the page and try again.'
        : status >= 500
          ? 'Something went wrong on our side. Try again in a moment.'
          : status === 404
            ? 'There is no such page.'
            : error.message;
      if (status >= 500 && request.session) (request as { session: unknown }).session = null;
      clearHeadersForError(reply);
      return reply.code(status).page('error', { title: ERROR_TITLES[status] ?? 'Error', message });
    });
    fastify.setNotFoundHandler(async (_request, reply) =>
      reply.code(404).page('error', { title: ERROR_TITLES[404]!, message: 'There is no such page.' }),
    );
  },
  { name: 'dashboard-errors', fastify: '5.x', dependencies: ['dashboard-pages', 'dashboard-busy'] },
);
