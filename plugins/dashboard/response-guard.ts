// The dashboard's last onSend hook, an async one: what follows it (Fastify writing the head and the body) then runs
// inside Fastify's own guard for async hooks, so a throw there (a header value `writeHead` refuses) becomes this
// request's error. Without it, it would run inside @fastify/session's save callback, called from a database promise.
import fp from 'fastify-plugin';

export default fp(
  async (fastify) => {
    fastify.addHook('onSend', async () => undefined);
  },
  { name: 'dashboard-response-guard', fastify: '5.x', dependencies: ['@fastify/session'] },
);
