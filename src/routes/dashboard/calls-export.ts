// "Export calls with consent (CSV)": the calls the viewer may see created in a period of days (in the viewer's zone,
// at most 93), oldest first, with their consent record and last calling-rules decision, streamed as CSV for an
// audit (src/domain/calls-csv.ts). A period the form cannot mean is a 400 page that says why.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { CallsExportQuery } from '../../../schemas/dashboard/calls-export.js';
import { exportCallsCsv, exportPeriodProblem } from '../../domain/calls-csv.js';

const TITLE = 'Export calls with consent';

const callsExport: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.get(
    '/calls/export.csv',
    { config: { role: 'viewer' }, schema: { hide: true, querystring: CallsExportQuery }, attachValidation: true },
    async (request, reply) => {
      const refuse = (message: string) => reply.code(400).page('error', { title: TITLE, message });
      if (request.validationError) return refuse('Give the period as two days, From and To, each written YYYY-MM-DD.');
      const [fromDay, toDay] = [request.query.from.trim(), request.query.to.trim()];
      const problem = exportPeriodProblem(fromDay, toDay);
      const from = request.times.parse(fromDay);
      const to = request.times.parse(toDay, true);
      if (problem || !from || !to) return refuse(problem ?? 'The period is not a period of days.');
      const name = `calls-with-consent-${fromDay}-to-${toDay}.csv`;
      return reply
        .header('content-type', 'text/csv; charset=utf-8')
        .header('content-disposition', `attachment; filename="${name}"`)
        .header('cache-control', 'no-store')
        .send(exportCallsCsv(request.scoped.eachCallForExport(from, to)));
    },
  );
};

export default callsExport;
