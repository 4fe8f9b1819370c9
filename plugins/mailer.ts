// `fastify.mailer`: the SMTP mailer when SMTP_URL is set, else null (then no e-mail is sent and the sign-in page says
// that an admin of the account makes new links). Sends under way finish before the app closes. `mailEnabledLocals`
// (registered in the dashboard's scope) tells every page which, as `it.mailEnabled`.
import fp from 'fastify-plugin';
import { Mailer } from '../src/mail/mailer.js';

declare module 'fastify' {
  interface FastifyInstance {
    mailer: Mailer | null;
  }
  interface FastifyReply {
    /** @fastify/view's per-request template data (its README's documented way; typed by the user of the plugin). */
    locals: Record<string, unknown> | null;
  }
}

export default fp(
  async (fastify) => {
    const { SMTP_URL } = fastify.config;
    const mailer = SMTP_URL ? new Mailer(SMTP_URL, fastify.config.smtpFrom, fastify.log) : null;
    fastify.decorate('mailer', mailer);
    fastify.addHook('onClose', async () => {
      await mailer?.close();
    });
  },
  { name: 'mailer', fastify: '5.x', dependencies: ['config'] },
);

export const mailEnabledLocals = fp(
  async (fastify) => {
    // After @fastify/view's own onRequest hook, which sets reply.locals to {}.
    fastify.addHook('onRequest', async (_request, reply) => {
      reply.locals = { ...reply.locals, mailEnabled: fastify.mailer !== null };
    });
  },
  { name: 'dashboard-mail-enabled', fastify: '5.x', dependencies: ['mailer', '@fastify/view'] },
);
