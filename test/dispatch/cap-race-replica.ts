// A dispatcher replica in a process of its own, for callee-caps-replicas.test.ts: its own pool over DATABASE_URL, the
// fixed clock NOW, and on the parent's 'go' the dispatcher's claim (planClaim in ClaimRepository.claimDue, the
// dispatcher's own code) for each account of ACCOUNTS in turn, round after round, until a round claims nothing. It
// reports how many calls it claimed and exits. No dial: the claim's ledger rows are what the test counts. Each claim
// waits COUNTED_PAUSE_MS after counting the dials (before it writes its own and commits): the window in which the
// other replica's count would miss them, were it not for the lock, made wide enough to be met every time.
import pino from 'pino';
import { planClaim } from '../../src/dispatch/claim-plan.js';
import { SimulatedDialer } from '../../src/dispatch/simulated-dialer.js';
import { BACKGROUND_POOL, createStorage, type CalleeLedger } from '../../src/storage/index.js';

const storage = createStorage(process.env.DATABASE_URL!, BACKGROUND_POOL);
const now = new Date(process.env.NOW!);
const accounts = process.env.ACCOUNTS!.split(',');
const options = {
  storage,
  databaseUrl: '',
  dialer: new SimulatedDialer(),
  now: () => now,
  log: pino({ level: 'silent' }),
  maxConcurrentCalls: 100,
};

const pauseMs = Number(process.env.COUNTED_PAUSE_MS ?? '0');
const paused = (ledger: CalleeLedger): CalleeLedger => ({
  lock: (keys) => ledger.lock(keys),
  count: async (requests, at) => {
    const counts = await ledger.count(requests, at);
    await new Promise((resolve) => setTimeout(resolve, pauseMs));
    return counts;
  },
});

async function race(): Promise<number> {
  let claimed = 0;
  for (;;) {
    let round = 0;
    for (const account of accounts) {
      const { result } = await storage.claims.claimDue([account], { maxActive: 100, now }, (candidates, ledger) =>
        planClaim(candidates, paused(ledger), now, `replica-${process.pid}`, 30_000, options),
      );
      round += result?.length ?? 0;
    }
    claimed += round;
    if (round === 0) return claimed;
  }
}

process.once('message', () => {
  race()
    .then(async (claimed) => {
      await storage.close();
      process.send!({ claimed }, () => process.exit(0));
    })
    .catch((error: unknown) => {
      process.send!({ error: String(error) }, () => process.exit(1));
    });
});
// Connected, and the claim's statements prepared (a claim for an account with nothing due), before the race.
void storage.claims
  .claimDue([process.env.WARM_UP_ACCOUNT!], { maxActive: 100, now }, (candidates, ledger) =>
    planClaim(candidates, ledger, now, `replica-${process.pid}`, 30_000, options),
  )
  .then(() => process.send!({ ready: true }));
