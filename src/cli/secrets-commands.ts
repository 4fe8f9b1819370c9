// callctl's secrets command: a key rotation's last step (docs/operations.md#secrets), every stored secret re-wrapped
// under the current SECRETS_KEY.
import { rotateStoredSecrets } from '../secrets/stored-secrets.js';
import type { Command } from './command-types.js';

export const SECRETS_COMMANDS: Command[] = [
  {
    words: ['secrets', 'rotate'],
    args: [],
    flags: [],
    usage: 'callctl secrets rotate',
    summary:
      'Re-wrap every stored secret sealed under an earlier key (SECRETS_KEY_PREVIOUS) under the current SECRETS_KEY, in batches, while the servers run',
    notice: (result) =>
      Number(result.remaining) > 0
        ? 'Some values are still under another key (a replica with the old SECRETS_KEY wrote them meanwhile): give every replica the new key, then run it again.'
        : 'Every stored secret is under the current key: the earlier key can leave SECRETS_KEY_PREVIOUS.',
    run: ({ storage }) => rotateStoredSecrets(storage),
  },
];
