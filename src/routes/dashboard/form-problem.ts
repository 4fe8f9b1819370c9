// What a person is told when a dashboard form does not validate (the schema bounds the fields; the rules that say
// something, like the password policy, are checked by the handler with their own words).
import type { FastifyRequest } from 'fastify';

export function formProblem(request: FastifyRequest): string | null {
  return request.validationError ? 'The form was not filled in as expected. Reload the page and try again.' : null;
}

/** The request's client IP for the audit log (X-Forwarded-For only when TRUST_PROXY says so). */
export function clientIp(request: FastifyRequest): string {
  return request.ip;
}
