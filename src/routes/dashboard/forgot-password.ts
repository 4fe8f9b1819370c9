// "Forgot your password?" (only when SMTP_URL is set; else 404 and the sign-in page names an admin instead): an email
// field; the answer is the same page whatever the address, known, unknown or throttled, and takes the same time,
// because the lookup, the new link and the e-mail all happen after the answer (fastify.mailer.later).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { requestPasswordReset, sendAuditedMail } from '../../admin/user-links.js';
import { setPasswordUrl } from '../../admin/users.js';
import { passwordResetMail } from '../../mail/messages.js';
import { ForgotPasswordForm } from '../../../schemas/dashboard/forms.js';
import { formatTime } from '../../domain/utc-time.js';

const forgotPassword: FastifyPluginAsyncTypebox = async (fastify) => {
  const mailerOr404 = () => {
    if (!fastify.mailer) throw fastify.httpErrors.notFound();
    return fastify.mailer;
  };

  fastify.get('/forgot-password', { config: { role: 'public' }, schema: { hide: true } }, async (_request, reply) => {
    mailerOr404();
    return reply.page('forgot-password', { title: 'Forgot your password?', email: '', problem: null });
  });

  fastify.post(
    '/forgot-password',
    {
      schema: { hide: true, body: ForgotPasswordForm },
      attachValidation: true,
      config: {
        role: 'public',
        formFailure: (_request, reply, { message }) => {
          mailerOr404();
          return reply
            .code(400)
            .page('forgot-password', { title: 'Forgot your password?', email: '', problem: message });
        },
      },
    },
    async (request, reply) => {
      const mailer = mailerOr404();
      const { email } = request.body;
      const ip = request.ip;
      if (await fastify.forgotPasswordAttempt(ip, email)) {
        mailer.later(async () => {
          const links = await request.admin.run(requestPasswordReset, { email, ip, now: request.admin.now() });
          for (const link of links) {
            await request.admin.run(sendAuditedMail, mailer, {
              accountId: link.accountId,
              actor: { kind: 'user', userId: link.userId, ip },
              kind: 'password_reset',
              message: passwordResetMail({
                to: link.email,
                accountName: link.accountName,
                link: setPasswordUrl(fastify.config, link.token),
                expires: formatTime(link.expiresAt),
              }),
              now: () => request.admin.now(),
            });
          }
        });
      }
      return reply.page('forgot-password-sent', { title: 'Check your e-mail', email });
    },
  );
};

export default forgotPassword;
