// Polls until a condition holds (background work such as dispatch and delivery finishes on its own schedule).
export async function waitFor<T>(
  probe: () => Promise<T> | T,
  done: (value: T) => boolean,
  timeoutMs = 10_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting; last value ${JSON.stringify(value)}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
