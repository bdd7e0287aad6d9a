// tier: process
// `svc api` reading its body from files, through the built bin: on Node 20
// the bundle runs in vm.Script (bin/load-bundle.js), where a module loaded
// with import() fails, which the in-process tier, running the sources,
// cannot show.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { svc, useLocalServer } from '../helpers/cli.js';

const local = useLocalServer(['--plan', 'pro']);

describe('svc api with a file', () => {
  it('sends --input FILE and -F name=@FILE, and names a file it cannot read (exit 2)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-api-files-'));
    writeFileSync(join(dir, 'body.json'), '{"name":"from-file"}');
    writeFileSync(join(dir, 'name.txt'), 'from-field-file');

    const input = await svc(['api', '/user/api-keys', '--input', join(dir, 'body.json')], local.env);
    expect(input.stderr).not.toContain('Unexpected error');
    expect(input.exitCode).toBe(0);
    expect(JSON.parse(input.stdout)).toMatchObject({ name: 'from-file' });

    const field = await svc(['api', '/user/api-keys', '-F', `name=@${join(dir, 'name.txt')}`], local.env);
    expect(field.exitCode).toBe(0);
    expect(JSON.parse(field.stdout)).toMatchObject({ name: 'from-field-file' });

    const missing = await svc(['api', '/user/api-keys', '--input', join(dir, 'nope.json')], local.env);
    expect(missing.exitCode).toBe(2);
    expect(missing.stderr).toContain(`--input names ${join(dir, 'nope.json')}, which cannot be read: there is no such file.`);
    const directory = await svc(['api', '/user/api-keys', '-F', `name=@${dir}`], local.env);
    expect(directory.exitCode).toBe(2);
    expect(directory.stderr).toContain('it is a directory');
  });
});
