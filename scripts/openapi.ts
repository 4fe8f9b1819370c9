// npm run openapi: writes the contract the code defines — openapi/openapi.json and one JSON Schema per request,
// response and webhook event under openapi/schemas/. `--check` fails when the committed files differ.
import fs from 'node:fs/promises';
import path from 'node:path';
import { generateContract } from '../src/openapi/generate.js';
import { PROJECT_ROOT } from '../src/paths.js';

const check = process.argv.includes('--check');
const files = await generateContract();
const stale: string[] = [];
for (const [relative, content] of files) {
  const target = path.join(PROJECT_ROOT, relative);
  const current = await fs.readFile(target, 'utf8').catch(() => null);
  if (current === content) continue;
  stale.push(relative);
  if (!check) {
    await fs.mkdir(path.dirname(target), { recursive: true });
    await fs.writeFile(target, content);
  }
}
if (check && stale.length) {
  process.stderr.write(`openapi/ is out of date; run npm run openapi. Differs: ${stale.join(', ')}\n`);
  process.exit(1);
}
process.stdout.write(
  check ? 'openapi/ is up to date\n' : `wrote ${files.size} files${stale.length ? ` (${stale.length} changed)` : ''}\n`,
);
