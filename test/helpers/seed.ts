// The tests' writes straight to the database, through the test's own Prisma client (prismaOf(app), freshPrisma):
// many rows at once, where the API or src/admin one by one would be too slow (calls with their events, deliveries),
// and the states no user or operator can make (a call the dispatcher left mid-dial, a delivery's past attempts, a
// setting outside what the forms accept), each named for what it makes. Whatever a user or operator could do goes
// through test/helpers/fixtures.ts (src/admin) instead.
//
// The writes take Prisma's own arguments (data, where) where they can, so that a test still reads as the row it writes.
export * from './seed/accounts.js';
export { runSql } from './seed/bulk.js';
export * from './seed/calls.js';
export * from './seed/do-not-call.js';
export * from './seed/results.js';
export * from './seed/webhooks.js';
