// tier: in-process
import { beforeAll, describe, expect, it } from 'vitest';
import { svc } from '../../helpers/in-process.js';
import { useCommandTest } from '../../helpers/command-test.js';

const local = useCommandTest({ plan: 'pro' });

// A list of more than the bootstrap key: what a list is there to show.
beforeAll(async () => {
  for (const name of ['ci', 'json-key']) await local.create(name);
});

describe('keys list', () => {
  it('prints tab-separated rows under a header when piped, with ISO times', async () => {
    const result = await svc(['keys', 'list'], local.env);
    expect(result.exitCode).toBe(0);
    const [head, ...rows] = result.stdout.split('\n');
    expect(head).toBe('ID\tNAME\tKEY\tSTATUS\tWORKSPACE\tCREATED\tEXPIRES\tLAST USED');
    expect(rows.length).toBeGreaterThanOrEqual(3);
    for (const row of rows) {
      const cells = row.split('\t');
      expect(cells).toHaveLength(8);
      expect(cells[5]).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    }
  });

  it('prints the API document with --json', async () => {
    const result = await svc(['keys', 'list', '--json'], local.env);
    const doc = JSON.parse(result.stdout);
    expect(Object.keys(doc)).toEqual(['keys']);
    expect(doc.keys[0]).toHaveProperty('hint');
    expect(result.stdout).not.toMatch(/sk_[A-Za-z0-9]{64}/);
  });
});
