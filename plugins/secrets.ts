// Secrets at rest (docs/operations.md#secrets): gives both storages the process's SecretBox (SECRETS_KEY, or the key
// of DATA_DIR/secrets.key), loaded on the first secret sealed or opened: an app built without a database or a data
// directory (npm run openapi) makes no key file. The server loads it at start anyway (src/server.ts).
import fp from 'fastify-plugin';
import type { SecretBox } from '../src/domain/secret-box.js';
import { loadSecrets } from '../src/secrets/keys.js';

export default fp(
  async (fastify) => {
    let box: SecretBox | null = null;
    const load = () => (box ??= loadSecrets(fastify.config).box);
    fastify.storage.secrets.use(load);
    fastify.backgroundStorage.secrets.use(load);
  },
  { name: 'secrets', fastify: '5.x', dependencies: ['config', 'db'] },
);
