// The baseline the service is compared with: bare Fastify whose one route inserts the same call row with `pg` and
// answers the same JSON. No authentication, limits, validation, logging, metrics or background work.
import { randomUUID } from 'node:crypto';
import Fastify from 'fastify';
import pg from 'pg';

const pool = new pg.Pool({ connectionString: process.env.BASELINE_DATABASE_URL, max: 10 });
// The agent and account the rows point at (foreign keys), read once at start.
const {
  rows: [agent],
} = await pool.query<{ id: string; account_id: string; phone_number: string }>(
  'SELECT id, account_id, phone_number FROM agents ORDER BY created_at LIMIT 1',
);
if (!agent) throw new Error('the baseline database needs one agent');

const DAY_MS = 24 * 3600_000;
const app = Fastify();

app.get('/health', async () => ({ ok: true }));

app.post('/api/v1/calls/trigger', async (request) => {
  const body = request.body as { phone_number: string; name?: string; email?: string; metadata?: object };
  const id = randomUUID();
  const now = new Date();
  // The same columns the service writes into calls (what Prisma sends for tx.call.create).
  await pool.query(
    `INSERT INTO calls (id, account_id, agent_id, phone_number, from_number, name, email, metadata, status, not_before, expires_at, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 'initiated', $9, $10, $9, $9)`,
    [
      id,
      agent.account_id,
      agent.id,
      body.phone_number,
      agent.phone_number,
      body.name ?? null,
      body.email ?? null,
      JSON.stringify(body.metadata ?? {}),
      now,
      new Date(now.getTime() + DAY_MS),
    ],
  );
  return { success: true, call_id: id, status: 'initiated' };
});

await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' });

const close = async () => {
  await app.close();
  await pool.end();
  process.exit(0);
};
process.once('SIGTERM', () => void close());
process.once('SIGINT', () => void close());
