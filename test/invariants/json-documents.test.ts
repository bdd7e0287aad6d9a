// tier: in-process
/**
 * docs/contract.md §C3: with --json, every command prints one JSON document
 * of a kind its schema under docs/ describes, in success and in failure (the
 * failure's own, docs/cli-error.schema.json, unless the command keeps its
 * document). Every command of the tree must have its cases here: a new
 * command fails the first test until its documents have a schema and a case.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, describe, expect, it } from 'vitest';
import { tree } from '../docs/helpers.js';
import { svc, useLocalServer, type RunOptions, type RunResult } from '../helpers/in-process.js';

const DOCS = resolve(import.meta.dirname, '../../docs');
const SCHEMA_FILES = readdirSync(DOCS).filter((name) => name.endsWith('.schema.json'));
const ajv = new Ajv2020({ strict: true, allErrors: true });
for (const name of SCHEMA_FILES) ajv.addSchema(JSON.parse(readFileSync(join(DOCS, name), 'utf8')) as object);
const validatorOf = (schema: string) => {
  const validate = ajv.getSchema(`https://svc.invalid/docs/${schema}.schema.json`);
  if (!validate) throw new Error(`no docs/${schema}.schema.json`);
  return validate;
};

const local = useLocalServer({ plan: 'pro' });
const work = mkdtempSync(join(tmpdir(), 'svc-json-documents-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** A profile of this file's config, logged in by `login` below: the commands that act on profiles use it. */
const profileEnv = (profile = 'documents') => ({ SVC_CONFIG_DIR: local.configDir, SVC_BASE_URL: local.server.url, SVC_API_KEY: undefined, SVC_PROFILE: profile });
const run = (args: string[], env: Record<string, string | undefined> = local.env, options: RunOptions = {}) => svc([...args, '--json'], env, options);
const made = async (name: string) => JSON.parse((await run(['keys', 'create', name])).stdout).key as { id: string; secret: string };
const REFUSED_KEY = `sk_${'A'.repeat(64)}`;
/** The keys `keys disable` below switched off, for `keys enable` and `keys prune`. */
const disabled: string[] = [];

/** One run, and the schema its stdout must meet: the command's own, or `cli-error` for the failure document. */
interface Case {
  name: string;
  schema: string;
  run: () => Promise<RunResult>;
}

/** Runs `svc serve --local --json` until its ready line is out, then stops it as a SIGTERM would. */
const serve = () =>
  run(['serve', '--local', '--port', '0'], {}, {
    deps: {
      onSignal(_signals, listener) {
        setImmediate(() => listener('SIGTERM'));
        return () => {};
      },
    },
  });

/**
 * Every command, by its path below `svc`, with its cases in the order they
 * run (a later case may use what an earlier one made). `none` names why a
 * command prints no document of its own on success.
 */
const COMMANDS: Record<string, { cases: Case[]; none?: string }> = {
  login: {
    cases: [
      { name: 'a key that works', schema: 'login', run: async () => run(['login', '--with-key'], profileEnv(), { input: (await made('for-login')).secret }) },
      { name: 'another key for the same profile, which it replaces', schema: 'login', run: async () => run(['login', '--with-key'], profileEnv(), { input: (await made('for-login-again')).secret }) },
      { name: 'a key the server refuses', schema: 'cli-error', run: () => run(['login', '--with-key'], profileEnv('refused'), { input: REFUSED_KEY }) },
    ],
  },
  status: {
    cases: [
      { name: 'a key that works', schema: 'status', run: () => run(['status']) },
      { name: 'every profile (--all)', schema: 'status-all', run: () => run(['status', '--all'], profileEnv()) },
      { name: '--all with --base-url', schema: 'cli-error', run: () => run(['status', '--all', '--base-url', local.server.url], profileEnv()) },
      { name: 'a key the server refuses keeps its own document', schema: 'status', run: () => run(['status'], { ...local.env, SVC_API_KEY: REFUSED_KEY }) },
      { name: 'an argument it does not take', schema: 'cli-error', run: () => run(['status', 'extra']) },
    ],
  },
  'keys list': {
    cases: [
      { name: 'every key', schema: 'key-list', run: () => run(['keys', 'list']) },
      { name: 'a key the server refuses', schema: 'cli-error', run: () => run(['keys', 'list'], { ...local.env, SVC_API_KEY: REFUSED_KEY }) },
    ],
  },
  'keys view': {
    cases: [
      { name: 'a key by id', schema: 'key', run: async () => run(['keys', 'view', (await made('to-view')).id]) },
      { name: 'no such key', schema: 'cli-error', run: () => run(['keys', 'view', 'key_nope']) },
    ],
  },
  'keys create': {
    cases: [
      { name: 'printed', schema: 'new-key', run: () => run(['keys', 'create', 'printed', '--expires-in', '30d']) },
      { name: 'delivered to a file', schema: 'new-key', run: () => run(['keys', 'create', 'delivered', '--to-file', join(work, 'create.env')]) },
      { name: 'a name the server refuses', schema: 'cli-error', run: () => run(['keys', 'create', 'x'.repeat(200)]) },
    ],
  },
  'keys revoke': {
    cases: [
      { name: 'one id', schema: 'key-change', run: async () => run(['keys', 'revoke', (await made('revoke-one')).id, '--yes']) },
      {
        name: 'every key of a name',
        schema: 'key-change',
        run: async () => {
          await made('revoke-all');
          await made('revoke-all');
          return run(['keys', 'revoke', '--name', 'revoke-all', '--all', '--yes']);
        },
      },
      { name: 'gone already, --if-exists', schema: 'key-change', run: () => run(['keys', 'revoke', 'key_nope', '--yes', '--if-exists']) },
      { name: 'no key of that name, --if-exists', schema: 'key-change', run: () => run(['keys', 'revoke', '--name', 'nobody', '--yes', '--if-exists']) },
      { name: 'no such key', schema: 'cli-error', run: () => run(['keys', 'revoke', 'key_nope', '--yes']) },
      { name: 'one id found, one not', schema: 'key-change', run: async () => run(['keys', 'revoke', (await made('revoke-found')).id, 'key_nope', '--yes']) },
    ],
  },
  'keys disable': {
    cases: [
      {
        name: 'two keys',
        schema: 'key-change',
        run: async () => {
          disabled.push((await made('to-disable')).id, (await made('to-disable')).id);
          return run(['keys', 'disable', ...disabled]);
        },
      },
      { name: 'no such key', schema: 'cli-error', run: () => run(['keys', 'disable', 'key_nope']) },
    ],
  },
  'keys enable': {
    cases: [
      { name: 'a disabled key', schema: 'key-change', run: () => run(['keys', 'enable', disabled[0]!]) },
      { name: 'no such key', schema: 'cli-error', run: () => run(['keys', 'enable', 'key_nope']) },
    ],
  },
  'keys rotate': {
    cases: [
      { name: 'printed', schema: 'new-key', run: async () => run(['keys', 'rotate', (await made('to-rotate')).id, '--yes']) },
      { name: '--disable-old, delivered', schema: 'new-key', run: async () => run(['keys', 'rotate', (await made('to-rotate-file')).id, '--yes', '--disable-old', '--to-file', join(work, 'rotate.env')]) },
      { name: '--overlap', schema: 'new-key', run: async () => run(['keys', 'rotate', (await made('overlapping')).id, '--overlap']) },
      { name: '--finish', schema: 'key-change', run: () => run(['keys', 'rotate', '--finish']) },
      { name: 'nobody to say yes', schema: 'cli-error', run: async () => run(['keys', 'rotate', (await made('not-rotated')).id]) },
    ],
  },
  'keys prune': {
    cases: [
      { name: '--dry-run', schema: 'key-change', run: () => run(['keys', 'prune', '--disabled', '--dry-run']) },
      { name: 'revoking', schema: 'key-change', run: () => run(['keys', 'prune', '--disabled', '--yes']) },
      { name: 'no criterion', schema: 'cli-error', run: () => run(['keys', 'prune']) },
    ],
  },
  'keys audit': {
    cases: [
      { name: 'passed', schema: 'audit', run: () => run(['keys', 'audit', '--max-age', '3650d']) },
      { name: 'broken (exit 1) keeps its own document', schema: 'audit', run: () => run(['keys', 'audit', '--require-expiry']) },
      { name: 'a policy that does not parse', schema: 'cli-error', run: () => run(['keys', 'audit', '--max-age', 'soon']) },
    ],
  },
  'keys ping': {
    cases: [
      { name: 'a key that works', schema: 'ping', run: () => run(['keys', 'ping']) },
      { name: 'a key the server refuses', schema: 'cli-error', run: () => run(['keys', 'ping'], { ...local.env, SVC_API_KEY: REFUSED_KEY }) },
    ],
  },
  'profile list': {
    cases: [
      { name: 'the profiles', schema: 'profiles', run: () => run(['profile', 'list'], profileEnv()) },
      { name: 'an argument it does not take', schema: 'cli-error', run: () => run(['profile', 'list', 'extra'], profileEnv()) },
    ],
  },
  'profile use': {
    cases: [
      { name: 'a profile', schema: 'profile-use', run: () => run(['profile', 'use', 'documents'], profileEnv()) },
      { name: 'no such profile', schema: 'cli-error', run: () => run(['profile', 'use', 'nowhere'], profileEnv()) },
    ],
  },
  'profile move-key': {
    cases: [
      { name: 'to where it is', schema: 'profile-move-key', run: () => run(['profile', 'move-key', 'documents', '--to', 'file'], profileEnv()) },
      { name: 'without --to', schema: 'cli-error', run: () => run(['profile', 'move-key', 'documents'], profileEnv()) },
    ],
  },
  logout: {
    cases: [
      { name: "the profile's key", schema: 'logout', run: () => run(['logout'], profileEnv()) },
      { name: 'no such profile', schema: 'cli-error', run: () => run(['logout'], profileEnv('nowhere')) },
    ],
  },
  'profile remove': {
    cases: [
      { name: 'the default profile', schema: 'profile-remove', run: () => run(['profile', 'remove', 'documents'], profileEnv()) },
      { name: 'no such profile', schema: 'cli-error', run: () => run(['profile', 'remove', 'nowhere'], profileEnv()) },
    ],
  },
  api: {
    // svc api prints the server's own answer: a key's, here, whose schema is the record's.
    cases: [
      { name: "a key's record, as the server answers it", schema: 'key', run: async () => run(['api', `/user/api-keys/${(await made('through-api')).id}`]) },
      { name: 'no path', schema: 'cli-error', run: () => run(['api']) },
      { name: 'an error answer', schema: 'cli-error', run: () => run(['api', '/user/api-keys/key_nope']) },
    ],
  },
  run: {
    none: "stdout is the command's (docs/contract.md §C10); running one is for the process tier",
    cases: [{ name: 'no command', schema: 'cli-error', run: () => run(['run']) }],
  },
  scan: {
    cases: [
      { name: 'text with a revoked key', schema: 'scan', run: async () => run(['scan', '-'], local.env, { input: `leaked: ${(await made('leaked')).secret}\n` }) },
      { name: 'a path that is not there', schema: 'cli-error', run: () => run(['scan', join(work, 'nothing-here')]) },
    ],
  },
  serve: {
    cases: [
      { name: 'the ready line', schema: 'serve', run: serve },
      { name: 'an option it does not take', schema: 'cli-error', run: () => run(['serve', '--local', '--no-such-option']) },
    ],
  },
  completion: {
    cases: [
      { name: 'a shell', schema: 'completion', run: () => run(['completion', 'bash']) },
      { name: 'a shell it does not know', schema: 'cli-error', run: () => run(['completion', 'tcsh']) },
    ],
  },
};

/** The one document on stdout, checked against its schema, and a failure's against the exit code of the same run. */
function checked(result: RunResult, schema: string): unknown {
  expect(() => JSON.parse(result.stdout), `stdout is one JSON document\n${result.stdout}\n${result.stderr}`).not.toThrow();
  const document: unknown = JSON.parse(result.stdout);
  const validate = validatorOf(schema);
  expect(validate(document), `docs/${schema}.schema.json: ${JSON.stringify(validate.errors, null, 2)}\n${result.stdout}`).toBe(true);
  if (schema === 'cli-error') {
    expect(result.exitCode).not.toBe(0);
    expect((document as { error: { exitCode: number } }).error.exitCode).toBe(result.exitCode);
  }
  return document;
}

describe('every --json document meets its schema', () => {
  it('every command of the tree has cases: a document of its own on success (or why none), the failure document on failure', () => {
    const commands = tree().commands.filter((c) => !c.isHelp && c.commands.length === 0).map((c) => c.path.slice(1).join(' '));
    expect(Object.keys(COMMANDS).sort()).toEqual(commands.sort());
    for (const [command, { cases, none }] of Object.entries(COMMANDS)) {
      expect(cases.some((c) => c.schema !== 'cli-error') || none !== undefined, `${command}: a case of its own document`).toBe(true);
      expect(
        cases.some((c) => c.schema === 'cli-error'),
        `${command}: a failure case`,
      ).toBe(true);
    }
  });

  it('every schema under docs/ is a case\'s, and each declares the draft ajv checks', () => {
    const used = new Set(['cli-error', ...Object.values(COMMANDS).flatMap(({ cases }) => cases.map((c) => c.schema)), 'version']);
    expect(SCHEMA_FILES.map((name) => name.replace('.schema.json', '')).sort()).toEqual([...used].sort());
    for (const name of SCHEMA_FILES) expect(JSON.parse(readFileSync(join(DOCS, name), 'utf8')).$schema).toBe('https://json-schema.org/draft/2020-12/schema');
  });

  for (const [command, { cases }] of Object.entries(COMMANDS)) {
    for (const { name, schema, run: runCase } of cases) {
      it(`svc ${command} --json, ${name}: docs/${schema}.schema.json`, async () => {
        checked(await runCase(), schema);
      });
    }
  }

  it('svc --version --json: docs/version.schema.json', async () => {
    checked(await svc(['--version', '--json']), 'version');
  });
});
