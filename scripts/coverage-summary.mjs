// The line coverage of src/ as a whole and of src/cli/ (its subfolders
// included), from the json-summary vitest's coverage run writes; the text
// table shows each folder on its own only.
import { readFileSync } from 'node:fs';
import { relative, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..');
const summary = JSON.parse(readFileSync(resolve(root, 'coverage/coverage-summary.json'), 'utf8'));
const files = Object.entries(summary)
  .filter(([file]) => file !== 'total')
  .map(([file, figures]) => ({ file: relative(root, file).replaceAll('\\', '/'), lines: figures.lines }));

for (const folder of ['src/', 'src/cli/']) {
  const inside = files.filter(({ file }) => file.startsWith(folder));
  const covered = inside.reduce((sum, { lines }) => sum + lines.covered, 0);
  const total = inside.reduce((sum, { lines }) => sum + lines.total, 0);
  console.log(`${folder.padEnd(9)} ${((100 * covered) / total).toFixed(2)} % of lines (${covered}/${total}, ${inside.length} files)`);
}
