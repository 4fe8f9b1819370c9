// Errors of operator actions (callctl, test fixtures): a message for a person, no HTTP status.
export class AdminError extends Error {
  override name = 'AdminError';
}
