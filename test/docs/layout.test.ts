// tier: in-process
/**
 * The layout of src/ as rules a new file cannot quietly break (README "How
 * the code is laid out"): imports follow the layers of the folders, no
 * command imports another, the CLI keeps no state at module level, only
 * the config writer writes a file, and only the renderer and the prompter
 * write to a stream.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const root = resolve(import.meta.dirname, '..', '..');
const src = join(root, 'src');
const files = readdirSync(src, { recursive: true })
  .map(String)
  .filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts'))
  .map((file) => `src/${file.replaceAll('\\', '/')}`);

/** Every module under src/ a file imports (static, dynamic and type-only), as a path from the repository root. */
function importsOf(file: string): string[] {
  const { importedFiles } = ts.preProcessFile(readFileSync(join(root, file), 'utf8'), true, true);
  return importedFiles
    .map(({ fileName }) => fileName)
    .filter((name) => name.startsWith('.'))
    .map((name) => relative(root, resolve(dirname(join(root, file)), name.replace(/\.js$/, '.ts'))).replaceAll('\\', '/'));
}

const edges = files.map((file) => ({ file, imports: importsOf(file) }));

/**
 * The layers, lowest first: a folder imports only from itself and from
 * the folders before it; folders that share a layer import nothing of
 * each other. A folder of src/cli counts with everything below it.
 */
const LAYERS = [
  ['contract'],
  ['client', 'server'],
  ['cli/text'],
  ['cli/errors'],
  ['cli/domain'],
  ['cli/sources'],
  ['cli/terminal'],
  ['cli/config'],
  ['cli/secret-store'],
  ['cli/session'],
  ['cli/docs'],
  ['cli/operations'],
  ['cli/views'],
  ['cli/child'],
  ['cli/delivery'],
  ['cli/dialogs'],
  ['cli/program'],
  ['cli/commands', 'cli/interactive'],
  ['cli/app'],
];
const folderOf = (file: string) => file.split('/').slice(1, file.startsWith('src/cli/') ? 3 : 2).join('/');
const layerOf = (folder: string) => LAYERS.findIndex((layer) => layer.includes(folder));

describe('the layout of src/', () => {
  it('finds the modules it checks, each in a folder of a layer', () => {
    expect(files.length).toBeGreaterThan(50);
    expect(files).toContain('src/cli/session/session.ts');
    expect(files.filter((file) => layerOf(folderOf(file)) === -1)).toEqual([]);
  });

  it('imports go down the layers, never up or across', () => {
    const wrong = edges.flatMap(({ file, imports }) =>
      imports
        .filter((target) => folderOf(target) !== folderOf(file) && layerOf(folderOf(target)) >= layerOf(folderOf(file)))
        .map((target) => `${file} → ${target}`),
    );
    expect(wrong).toEqual([]);
  });

  it("no command imports another command; a group's index registers its own subcommands", () => {
    const isCommand = (file: string) => file.startsWith('src/cli/commands/');
    const wrong = edges.flatMap(({ file, imports }) =>
      isCommand(file) ? imports.filter((target) => isCommand(target) && !(file.endsWith('/index.ts') && dirname(target) === dirname(file))) : [],
    );
    expect(wrong).toEqual([]);
  });

  it('the CLI keeps no mutable state at module level', () => {
    const mutable = /^(export\s+)?(let|var)\s|^(export\s+)?const\s+\w+(\s*:[^=]+)?=\s*(new\s+(Map|Set|WeakMap|Array)\b|\[\s*\]|\{\s*\})/;
    const found = files
      .filter((file) => file.startsWith('src/cli/'))
      .flatMap((file) =>
        readFileSync(join(root, file), 'utf8')
          .split('\n')
          .flatMap((line, i) => (mutable.test(line) ? [`${file}:${i + 1}: ${line.trim()}`] : [])),
      );
    expect(found).toEqual([]);
  });

  it('every profile change goes through the config writer: nothing else in the CLI writes a file', () => {
    // --to-file writes a new key's secret to the file the user names, atomically and at mode 0600: a secret, not a profile.
    const delivery = 'src/cli/delivery/to-file.ts';
    // svc scan --baseline adds fingerprints to the ignore file of what it scanned: the project's file, not a profile.
    const ignoreFile = 'src/cli/sources/ignore-file.ts';
    const writes = files
      .filter((file) => file.startsWith('src/cli/') && !file.startsWith('src/cli/config/') && file !== delivery && file !== ignoreFile)
      .filter((file) => /\b(writeFileSync|writeFile|renameSync|rename|appendFileSync|createWriteStream|linkSync)\(/.test(readFileSync(join(root, file), 'utf8')));
    expect(writes).toEqual([]);
  });

  it('nothing in the CLI writes to a stream but the renderer, the prompter and the few that print data verbatim', () => {
    const verbatim = new Set([
      'src/cli/terminal/renderer.ts',
      // The renderer's region: its own cursor moves and erases, and again what the renderer wrote, as it wrote it.
      'src/cli/terminal/region.ts',
      'src/cli/terminal/io.ts',
      'src/cli/app/main.ts',
      // Commander's help and usage errors: svc's own text and the words typed, never a server's.
      'src/cli/program/program.ts',
      // A shell script generated from svc's own command tree; completion words, one a line, escaped by the command.
      'src/cli/commands/completion.ts',
      'src/cli/commands/complete.ts',
    ]);
    const writers = files.filter(
      (file) => file.startsWith('src/cli/') && !verbatim.has(file) && /\b(stdout|stderr)\.write\(/.test(readFileSync(join(root, file), 'utf8')),
    );
    expect(writers).toEqual([]);
  });
});
