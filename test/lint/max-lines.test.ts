// The file-size rule of eslint.config.js fails a file of src/, plugins/ or schemas/ over 300 lines as `wc -l` counts
// them: each snippet is linted as a file of that folder with the repo's config (that rule only, no type information).
import path from 'node:path';
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

const RULE = 'max-lines';
const eslint = new ESLint({
  cwd: path.resolve(import.meta.dirname, '../..'),
  overrideConfig: { languageOptions: { parserOptions: { projectService: false, project: null } } },
  ruleFilter: ({ ruleId }) => ruleId === RULE,
});

/** The rule's findings on `lines`, written as a file ending in a newline (so `wc -l` counts `lines.length`). */
async function findings(filePath: string, lines: string[]): Promise<string[]> {
  const [result] = await eslint.lintText(`${lines.join('\n')}\n`, { filePath, warnIgnored: false });
  return (result?.messages ?? []).filter((m) => m.ruleId === RULE).map((m) => m.message);
}

/** `n` lines of code. */
const code = (n: number) => Array.from({ length: n }, (_, i) => `export const line${i} = ${i};`);

describe('the file-size rule', () => {
  it.each(['src/x.ts', 'src/routes/dashboard/x.ts', 'plugins/x.ts', 'plugins/dashboard/x.ts', 'schemas/x.ts'])(
    '%s: 301 lines fail, 300 pass',
    async (file) => {
      expect(await findings(file, code(301))).toEqual([
        expect.stringMatching(/too many lines \(301\)\. Maximum allowed is 300/i),
      ]);
      expect(await findings(file, code(300))).toEqual([]);
    },
  );

  it('counts blank lines and comments', async () => {
    const padded = [...code(1), ...Array.from({ length: 150 }, () => ''), ...Array.from({ length: 150 }, () => '// .')];
    expect(padded).toHaveLength(301);
    expect(await findings('src/x.ts', padded)).toEqual([expect.stringMatching(/too many lines \(301\)/i)]);
  });

  it.each(['src/generated/prisma/x.ts', 'test/x.test.ts', 'bench/x.ts'])('%s: not counted', async (file) => {
    expect(await findings(file, code(400))).toEqual([]);
  });
});
