// Keys in the URL are refused (they end up in proxy logs, browser history and Referer headers): a key parameter by
// name in any casing, or any parameter whose value looks like a key. The first check after HTTPS.
import fp from 'fastify-plugin';
import type { FastifyRequest } from 'fastify';
import { API_KEY_PREFIX } from '../src/domain/api-key.js';
import { AppError } from '../src/errors.js';

export const KEY_QUERY_PARAMETERS = ['api_key', 'apikey', 'key', 'token', 'access_token'];

function keyInUrl(request: FastifyRequest): boolean {
  const query = request.url.indexOf('?');
  if (query === -1) return false;
  const params = new URLSearchParams(request.url.slice(query + 1));
  for (const [name, value] of params) {
    if (KEY_QUERY_PARAMETERS.includes(name.toLowerCase()) || value.includes(API_KEY_PREFIX)) return true;
  }
  return false;
}

export default fp(
  async (fastify) => {
    fastify.addHook('onRequest', async (request) => {
      if (keyInUrl(request)) throw new AppError('KEY_IN_URL');
    });
  },
  { name: 'key-in-url', fastify: '5.x', dependencies: ['errors'] },
);
