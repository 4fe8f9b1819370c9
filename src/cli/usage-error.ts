// A mistake in how callctl was called (exit 2), told apart from a refused operation (exit 1). Its own module, so that
// the command tables beside commands.ts can throw it without importing the file that imports them.
export class UsageError extends Error {
  override name = 'UsageError';
}
