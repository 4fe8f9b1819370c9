// The README's screenshots come from a real run: the same showcase and capture functions as `npm run screenshots`,
// here against the test's server. They go to a temporary directory, or with SCREENSHOTS=1 to docs/screenshots/.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  captureScreenshots,
  makeShowcase,
  SCREENSHOTS_DIR,
  SHOWCASE_ENV,
  startShowcaseReceiver,
  type ShowcaseReceiver,
} from '../../scripts/screenshots.js';
import { chromiumAvailable, startBrowserWorld, type BrowserWorld } from './browser.js';

const available = chromiumAvailable();
const intoDocs = process.env.SCREENSHOTS === '1';
const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

let world: BrowserWorld;
let receiver: ShowcaseReceiver | undefined;
let outDir: string;

afterAll(async () => {
  await receiver?.close();
  if (outDir && !intoDocs) rmSync(outDir, { recursive: true, force: true });
});

describe.skipIf(!available)('screenshots of the dashboard', { timeout: 90_000 }, () => {
  beforeAll(async () => {
    receiver = await startShowcaseReceiver();
    world = await startBrowserWorld(SHOWCASE_ENV);
    outDir = intoDocs ? SCREENSHOTS_DIR : mkdtempSync(path.join(os.tmpdir(), 'oct-screenshots-'));
  }, 90_000);

  it('captures the call detail view and Settings → API & Webhooks of a showcase agency', async () => {
    const showcase = await makeShowcase(world.prisma, { port: world.server.port, receiver: receiver! });
    const shots = await captureScreenshots(world.browser, { baseUrl: world.baseUrl, showcase, outDir });
    expect(shots.map((s) => [s.file, s.title])).toEqual([
      ['call-detail.png', 'Call to +15125550187'],
      ['api-webhooks.png', 'Settings → API & Webhooks'],
    ]);
    for (const shot of shots) {
      const png = readFileSync(shot.path);
      expect(png.subarray(0, 8).equals(PNG_SIGNATURE), shot.file).toBe(true);
      // IHDR: width then height, big-endian, at bytes 16 and 20.
      expect(png.readUInt32BE(16), shot.file).toBe(1280);
      expect(png.readUInt32BE(20), shot.file).toBeGreaterThanOrEqual(800);
    }
  });
});
