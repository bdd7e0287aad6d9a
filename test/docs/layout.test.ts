// tier: in-process
/**
 * The layout of src/ as rules a new file cannot quietly break (README "How
 * the code is laid out"): commands are thin callers that import no other
 * command, the client knows nothing of the CLI, the shared contract
 * nothing of either side, the CLI keeps no state at module level, and only
 * the config writer writes a file.
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
const breaking = (from: (file: string) => boolean, to: (file: string, importer: string) => boolean) =>
  edges.flatMap(({ file, imports }) => (from(file) ? imports.filter((target) => to(target, file)).map((target) => `${file} → ${target}`) : []));

const isCommand = (file: string) => file.startsWith('src/cli/commands/');
/** A command group's index registers its own subcommands; that is the one import between command files. */
const registersOwnSubcommand = (target: string, importer: string) => importer.endsWith('/index.ts') && dirname(target) === dirname(importer);

describe('the layout of src/', () => {
  it('finds the modules it checks', () => {
    expect(files.length).toBeGreaterThan(50);
    expect(files).toContain('src/cli/session.ts');
  });

  it('no command imports another command, and the interactive manager imports none', () => {
    expect(breaking(isCommand, (target, importer) => isCommand(target) && !registersOwnSubcommand(target, importer))).toEqual([]);
    expect(breaking((file) => file.startsWith('src/cli/interactive/'), isCommand)).toEqual([]);
  });

  it('operations, dialogs and views import no command, and operations no dialog or view', () => {
    const shared = (file: string) => /^src\/cli\/(operations|dialogs|views)\//.test(file);
    expect(breaking(shared, isCommand)).toEqual([]);
    expect(breaking((file) => file.startsWith('src/cli/operations/'), (target) => /^src\/cli\/(dialogs|views|interactive)\//.test(target))).toEqual([]);
  });

  it('the client imports nothing of the CLI or the server; the contract nothing of any side', () => {
    expect(breaking((file) => file.startsWith('src/client/'), (target) => target.startsWith('src/cli/') || target.startsWith('src/server/'))).toEqual([]);
    expect(breaking((file) => file.startsWith('src/contract/'), (target) => !target.startsWith('src/contract/'))).toEqual([]);
    expect(breaking((file) => file.startsWith('src/server/'), (target) => target.startsWith('src/cli/') || target.startsWith('src/client/'))).toEqual([]);
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
    const writes = files
      .filter((file) => file.startsWith('src/cli/') && !file.startsWith('src/cli/config/') && file !== delivery)
      .filter((file) => /\b(writeFileSync|writeFile|renameSync|rename|appendFileSync|createWriteStream|linkSync)\(/.test(readFileSync(join(root, file), 'utf8')));
    expect(writes).toEqual([]);
  });

  it('nothing in the CLI writes to a stream but the renderer, the prompter and the few that print data verbatim', () => {
    const verbatim = new Set([
      'src/cli/render/renderer.ts',
      // The renderer's region: its own cursor moves and erases, and again what the renderer wrote, as it wrote it.
      'src/cli/render/region.ts',
      'src/cli/io.ts',
      'src/cli/main.ts',
      // Commander's help and usage errors: svc's own text and the words typed, never a server's.
      'src/cli/program.ts',
      // A shell script generated from svc's own command tree; completion words, one a line, escaped by the command.
      'src/cli/commands/completion.ts',
      'src/cli/commands/complete.ts',
      // The ready line of `svc serve --json`, svc's own document.
      'src/cli/commands/serve.ts',
    ]);
    const writers = files.filter(
      (file) => file.startsWith('src/cli/') && !verbatim.has(file) && /\b(stdout|stderr)\.write\(/.test(readFileSync(join(root, file), 'utf8')),
    );
    expect(writers).toEqual([]);
  });
});
