// tier: in-process
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ENVIRONMENT } from '../../src/cli/terminal/environment.js';
import { DEFAULT_BASE_URL } from '../../src/contract/paths.js';

const repo = resolve(import.meta.dirname, '../..');
const listed = new Set(ENVIRONMENT.flatMap((entry): readonly string[] => ('alsoRead' in entry ? [...entry.names, ...entry.alsoRead] : entry.names)));

/** The code svc runs: the sources of the bundle, and bin/, which loads it. */
const files = [
  ...readdirSync(join(repo, 'src'), { recursive: true })
    .map((file) => `src/${String(file).replaceAll('\\', '/')}`)
    .filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts')),
  ...readdirSync(join(repo, 'bin'))
    .filter((file) => file.endsWith('.js'))
    .map((file) => `bin/${file}`),
];

const DIRECT = /\benv(?:\?\.|\.)(\w+)|\benv(?:\?\.)?\[\s*(['"`])(\w+)\2\s*\]/g;

/**
 * The variables `source` reads as env.NAME, env?.NAME or env['NAME'], from
 * process.env and io.env alike. A variable's name is upper case or has an
 * underscore; that tells it from a property of another object called env
 * (the retry policy's { nowMs, random }).
 */
function directReads(source: string): string[] {
  return [...source.matchAll(DIRECT)].map((m) => m[1] ?? m[3]!).filter((name) => /^[A-Z0-9_]+$/.test(name) || name.includes('_'));
}

describe('the environment variables svc reads (src/cli/terminal/environment.ts)', () => {
  it('are found by the scan, however the code spells a read', () => {
    const source = "process.env.NO_COLOR; io.env['SVC_X']; env?.http_proxy; ctx.io.env?.[\"CI\"]; env.nowMs; env.random(); readEnv(env, 'SVC_Y')";
    expect(directReads(source)).toEqual(['NO_COLOR', 'SVC_X', 'http_proxy', 'CI']);
  });

  it('are all listed: code reads no variable the list, and so the man page, leaves out', () => {
    const unlisted = files.flatMap((file) =>
      directReads(readFileSync(join(repo, file), 'utf8'))
        .filter((name) => !listed.has(name))
        .map((name) => `${file}: ${name}`),
    );
    expect(unlisted, 'add each to src/cli/terminal/environment.ts, then run `npm run man`').toEqual([]);
  });

  it('are read through readEnv, which takes only listed names', () => {
    const direct = files
      .filter((file) => file.startsWith('src/'))
      .flatMap((file) => directReads(readFileSync(join(repo, file), 'utf8')).map((name) => `${file}: ${name}`));
    expect(direct).toEqual([]);
  });

  it("are the ones README's table describes, as the list describes them", () => {
    const readme = readFileSync(join(repo, 'README.md'), 'utf8');
    const table = readme.slice(readme.indexOf('| variable | effect |\n|---|---|\n')).split('\n\n')[0]!.split('\n').slice(2);
    expect(table).toEqual(ENVIRONMENT.map(({ names, description }) => `| ${names.map((name) => `\`${name}\``).join(', ')} | ${description} |`));
  });

  it('gives the default service address the code uses', () => {
    expect(ENVIRONMENT.find(({ names }) => names[0] === 'SVC_BASE_URL')!.description).toContain(`\`${DEFAULT_BASE_URL}\``);
  });
});
