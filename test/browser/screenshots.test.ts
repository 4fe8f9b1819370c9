// The dashboard's screenshots come from a real run (`npm run screenshots` runs this file): the showcase against the
// test's server, every page of dashboardPages at 1280 px and at 390 px. They go to a temporary directory dropped
// afterwards, with SCREENSHOTS=1 to docs/screenshots/, or with SCREENSHOTS_OUT=<dir> to that directory (kept).
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  captureScreenshots,
  dashboardPages,
  dashboardPagesOutline,
  WIDTHS,
  makeShowcase,
  SCREENSHOTS_DIR,
  SHOWCASE_ENV,
  startShowcaseReceiver,
  type ShowcaseReceiver,
} from './showcase.js';
import { PROJECT_ROOT } from '../../src/paths.js';
import { chromiumAvailable, startBrowserWorld, type BrowserWorld } from './browser.js';
import { storageOf } from '../helpers/database.js';

const available = chromiumAvailable();
const intoDocs = process.env.SCREENSHOTS === '1';
const keptDir = process.env.SCREENSHOTS_OUT;
const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

let world: BrowserWorld;
let receiver: ShowcaseReceiver | undefined;
let outDir: string;

afterAll(async () => {
  await receiver?.close();
  if (outDir && !intoDocs && !keptDir) rmSync(outDir, { recursive: true, force: true });
});

// About seventy full-page pictures on a busy 2-core machine.
describe.skipIf(!available)('screenshots of the dashboard', { timeout: 600_000 }, () => {
  beforeAll(async () => {
    receiver = await startShowcaseReceiver();
    world = await startBrowserWorld(SHOWCASE_ENV);
    outDir = intoDocs ? SCREENSHOTS_DIR : (keptDir ?? mkdtempSync(path.join(os.tmpdir(), 'oct-screenshots-')));
  }, 120_000);

  it('captures every page of a showcase agency, its client and their users at 1280 px and at 390 px', async () => {
    const showcase = await makeShowcase(storageOf(world.prisma), { port: world.server.port, receiver: receiver! });
    const shots = await captureScreenshots(world.browser, { baseUrl: world.baseUrl, showcase, outDir });
    const expected = dashboardPages(showcase).flatMap((p) => WIDTHS.map((w) => `${p.name}-${w.width}.png`));
    expect(shots.map((s) => s.file).sort()).toEqual(expected.sort());
    for (const shot of shots) {
      const png = readFileSync(shot.path);
      expect(png.subarray(0, 8).equals(PNG_SIGNATURE), shot.file).toBe(true);
      // IHDR: width then height, big-endian, at bytes 16 and 20. No page is wider than the screen: a full-page
      // picture of a page that scrolls sideways would be wider.
      expect(png.readUInt32BE(16), shot.file).toBe(shot.width);
      expect(png.readUInt32BE(20), shot.file).toBeGreaterThanOrEqual(shot.width === 1280 ? 800 : 844);
    }
  });
});

describe('the dashboard docs', () => {
  it('show both pictures of every page, and the pictures are there', () => {
    const docs = readFileSync(path.join(PROJECT_ROOT, 'docs', 'dashboard.md'), 'utf8');
    for (const page of dashboardPagesOutline())
      for (const { width } of WIDTHS) {
        const file = `${page.name}-${width}.png`;
        expect(docs, file).toContain(`src="screenshots/${file}"`);
        expect(existsSync(path.join(SCREENSHOTS_DIR, file)), file).toBe(true);
      }
  });
});
