import { describe, expect, it } from 'vitest';
import { SingleFlight } from '../../src/jobs/single-flight.js';

/** A run that waits until the test lets it end. */
function gatedWork() {
  const releases: Array<() => void> = [];
  let runs = 0;
  let concurrent = 0;
  let peak = 0;
  const work = async () => {
    runs++;
    concurrent++;
    peak = Math.max(peak, concurrent);
    await new Promise<void>((resolve) => releases.push(resolve));
    concurrent--;
  };
  return { work, releases, runs: () => runs, peak: () => peak };
}

describe('SingleFlight', () => {
  it('serves every request made during a run with one more run, never two at once', async () => {
    const gated = gatedWork();
    const flight = new SingleFlight(gated.work, () => {});
    flight.request();
    for (let i = 0; i < 39; i++) flight.request();
    expect(gated.runs()).toBe(1);
    gated.releases.shift()!();
    await new Promise((resolve) => setImmediate(resolve));
    expect(gated.runs()).toBe(2);
    gated.releases.shift()!();
    await flight.settle();
    expect(gated.runs()).toBe(2);
    expect(gated.peak()).toBe(1);
  });

  it('runs again for a request made after a run ended, and reports a failed run without losing the next', async () => {
    const errors: Error[] = [];
    let calls = 0;
    const flight = new SingleFlight(
      async () => {
        calls++;
        if (calls === 1) throw new Error('down');
      },
      (error) => errors.push(error),
    );
    flight.request();
    await flight.settle();
    flight.request();
    await flight.settle();
    expect(calls).toBe(2);
    expect(errors.map((e) => e.message)).toEqual(['down']);
  });
});
