// The tests' writes straight to the database, through the test's own Prisma client (prismaOf(app), freshPrisma) or,
// for the bulk writes (Db), a connection of the test's own (a plan-reporting client, a pool): many rows at once, where
// the API or src/admin one by one would be too slow (calls with their events, deliveries, a year of history, the
// Overview's counters: call-rows.ts, delivery-rows.ts, history.ts, outcome-counters.ts), and the states no user or
// operator can make (a call the dispatcher left mid-dial, a delivery's past attempts, a sign-in long ago, a setting
// outside what the forms accept), each named for what it makes. Whatever a user or operator could do goes through
// test/helpers/fixtures.ts (src/admin) instead.
//
// A test writes with SQL of its own only where that SQL is its subject, and says so; those writes stay inline because
// moving them here would hide what is tested:
// - a migration, and the rows as they stood before it (test/storage/migrate.test.ts, a migration file re-run);
// - what the triggers make of any statement on calls (waiting-calls, overview-outcomes: the hand-written UPDATE,
//   DELETE and TRUNCATE are the cases);
// - the other side of a race, a write made while the service's own is under way, often in a transaction the test
//   holds open while the service waits for its lock (cancel-calls' claim, stored-secrets' writer, sessions'
//   overlapping write; whileHolding, race.ts, opens such a transaction on a pool);
// - a fault: DDL that breaks or slows the service (a trigger failing at commit, a renamed column, a table lock).
// Reads (assertions, EXPLAIN of a statement under test) are no writes and stay where they are read.
//
// The writes take Prisma's own arguments (data, where) where they can, so that a test still reads as the row it writes;
// the bulk ones take rows the test spells out (bulkInsertCalls, bulkInsertDeliveries...).
export * from './seed/accounts.js';
export { insertRow, runSql, type Db } from './seed/bulk.js';
export * from './seed/call-rows.js';
export * from './seed/calling-rules.js';
export * from './seed/calls.js';
export * from './seed/compliance-calls.js';
export * from './seed/compliance-settings.js';
export * from './seed/delivery-rows.js';
export * from './seed/do-not-call.js';
export * from './seed/held-calls.js';
export * from './seed/history.js';
export * from './seed/outcome-counters.js';
export * from './seed/race.js';
export * from './seed/results.js';
export * from './seed/sessions.js';
export * from './seed/webhooks.js';
