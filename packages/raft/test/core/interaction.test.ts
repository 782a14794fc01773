// Runs every data-driven interaction case in testdata/ (format: datadriven.ts,
// commands: interaction-env.ts). REWRITE=1 writes the actual outputs back into
// the files instead of comparing — review the diff before keeping it.
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseDataFile, rebuildDataFile } from './datadriven';
import { InteractionEnv } from './interaction-env';

const dir = join(__dirname, 'testdata');
const files = readdirSync(dir).filter((f) => f.endsWith('.txt')).sort();
const rewrite = process.env.REWRITE === '1';

describe('interaction cases (testdata/*.txt)', () => {
  it('has cases', () => expect(files.length).toBeGreaterThan(0));

  for (const file of files) {
    it(file, () => {
      const path = join(dir, file);
      const text = readFileSync(path, 'utf8');
      const env = new InteractionEnv();
      const actual = rebuildDataFile(parseDataFile(text, file), (cmd) => env.handle(cmd));
      if (rewrite) {
        if (actual !== text) writeFileSync(path, actual);
      } else {
        expect(actual).toBe(text);
      }
    });
  }
});
