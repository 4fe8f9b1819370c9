// "Forgot your password?" (only when SMTP_URL is set; else 404 and the sign-in page names an admin instead): an email
// field; the answer is the same page whatever the address, known, unknown or throttled, and takes the same time,
// because the lookup, the new link and the e-mail all happen after the answer (fastify.mailer.later).
import type { FastifyInstance } from 'fastify';
import { requestPasswordReset, sendAuditedMail } from '../../admin/user-links.js';
import { setPasswordUrl } from '../../admin/users.js';
import { passwordResetMail } from '../../mail/messages.js';
import { ForgotPasswordForm } from '../../../schemas/dashboard/forms.js';
import { clientIp, formProblem } from '../../views/form-problem.js';
import { formatTime } from '../../views/format/time.js';

export default async function forgotPassword(fastify: FastifyInstance) {
  const mailerOr404 = () => {
    if (!fastify.mailer) throw fastify.httpErrors.notFound();
    return fastify.mailer;
  };

  fastify.get('/forgot-password', { schema: { hide: true } }, async (_request, reply) => {
    mailerOr404();
    return reply.page('forgot-password', { title: 'Forgot your password?', email: '', problem: null });
  });

  fastify.post<{ Body: ForgotPasswordForm }>(
    '/forgot-password',
    { schema: { hide: true, body: ForgotPasswordForm }, attachValidation: true },
    async (request, reply) => {
      const mailer = mailerOr404();
      const problem = formProblem(request);
      if (problem)
        return reply.code(400).page('forgot-password', { title: 'Forgot your password?', email: '', problem });
      const { email } = request.body;
      const ip = clientIp(request);
      if (await fastify.forgotPasswordAttempt(ip, email)) {
        mailer.later(async () => {
          const links = await requestPasswordReset(fastify.storage, { email, ip, now: fastify.now() });
          for (const link of links) {
            await sendAuditedMail(fastify.storage, mailer, {
              accountId: link.accountId,
              actor: { kind: 'user', userId: link.userId, ip },
              kind: 'password_reset',
              message: passwordResetMail({
                to: link.email,
                accountName: link.accountName,
                link: setPasswordUrl(fastify.config, link.token),
                expires: formatTime(link.expiresAt),
              }),
              now: () => fastify.now(),
            });
          }
        });
      }
      return reply.page('forgot-password-sent', { title: 'Check your e-mail', email });
    },
  );
}
