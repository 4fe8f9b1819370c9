// A user's role (src/domain/roles.ts), changed on the Users page or a client's page by whoever manages the people of
// the user's account: its owners, and its agency's owners and admins for a client (the agency-only family's route).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { setUserRole } from '../../admin/user-roles.js';
import { UserParams, UserRoleForm } from '../../../schemas/dashboard/people.js';
import { usersPage } from '../../views/pages/users.js';
import { pageOf } from './users.js';

const userRoles: FastifyPluginAsyncTypebox = async (fastify) => {
  // `/users/:id/...`: a user of an account the viewer manages, else 404.
  fastify.resolveManaged('user', 'id');

  fastify.post(
    '/users/:id/role',
    {
      schema: { hide: true, params: UserParams, body: UserRoleForm },
      attachValidation: true,
      config: {
        role: 'owner',
        // A refusal (the last owner, a role the schema refused): the Users page again, the refusal above it.
        formFailure: async (request, reply, { message }) =>
          reply.code(400).page('users', await usersPage(request, fastify.mailer !== null, message)),
      },
    },
    async (request, reply) => {
      const { user, account } = request.managed('user');
      const role = request.body.role;
      const result = await request.admin.run(setUserRole, user.id, role, request.admin.actor, request.admin.now());
      const text = result.changed ? `${user.email} is now ${role}.` : `${user.email} was already ${role}.`;
      return reply.seeOther(pageOf(account, request.body.from), { kind: 'ok', text });
    },
  );
};

export default userRoles;
