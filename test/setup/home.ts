// Every test file gets a home of its own, set in process.env: what svc does
// in-process and every child a test starts without an environment of its
// own lands there, and the helpers hand it to the children they start
// (test/helpers/home.ts homeEnv).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { homeVars } from '../helpers/home.js';

const home = mkdtempSync(join(tmpdir(), 'svc-home-'));
Object.assign(process.env, homeVars(home));
afterAll(() => rmSync(home, { recursive: true, force: true }));
