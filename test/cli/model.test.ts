// tier: in-process
/**
 * Model-based (issue 22): random sequences of login, logout, create,
 * revoke, enable/disable, rotate (--save, --overlap, --disable-old) and its
 * --finish/--cancel, clock moves and faults that fail a request before its
 * work or lose its answer after it, each run in-process through main()
 * against the reference server; after every step the server's keys and the
 * config file must match the model of test/helpers/key-model.ts.
 *
 * fast-check prints the seed and the shortest failing sequence it found;
 * SVC_MODEL_SEED=<n> runs that seed again.
 */
import fc from 'fast-check';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { clockStep, describeStep, emptyModel, PRELUDE, profileStep, runSteps, type Model, type Step, type World } from '../helpers/key-model.js';
import { call, startLocalServer, svc, type LocalServer } from '../helpers/in-process.js';

const RUNS = 40;
const seed = process.env.SVC_MODEL_SEED ? Number(process.env.SVC_MODEL_SEED) : Math.floor(Math.random() * 2 ** 31);
if (!Number.isSafeInteger(seed)) throw new Error(`SVC_MODEL_SEED must be an integer, not ${process.env.SVC_MODEL_SEED}`);

let server: LocalServer;
beforeAll(async () => {
  server = await startLocalServer({ plan: 'pro' });
});
afterAll(() => server?.stop());

class Do implements fc.AsyncCommand<Model, World> {
  constructor(readonly step: Step) {}
  check = () => true;
  run = (model: Model, world: World) => runSteps(model, world, [this.step]);
  toString = () => describeStep(this.step);
}

/** A fresh world (new user, workspace and bootstrap key) and an empty config dir for each sequence. */
async function freshWorld(): Promise<World> {
  const reset = await call(server.url, 'POST', '/_local/reset', server.adminToken);
  expect(reset.status).toBe(200);
  const listed = await call(server.url, 'GET', '/api/service/user/api-keys', reset.json.apiKey);
  return {
    url: reset.json.url,
    adminToken: server.adminToken,
    bootstrap: reset.json.apiKey,
    bootstrapId: listed.json.keys[0].id,
    configDir: mkdtempSync(join(tmpdir(), 'svc-model-')),
    run: (args, env, options) => svc(args, env, options),
  };
}

it(`${RUNS} random sequences of svc commands, clock moves and faults keep the server and the config file as the model says`, async () => {
  console.info(`model: seed ${seed}; replay it with SVC_MODEL_SEED=${seed} npx vitest run test/cli/model.test.ts`);
  const step = fc.oneof({ weight: 12, arbitrary: profileStep({ faults: true }) }, { weight: 1, arbitrary: clockStep });
  await fc.assert(
    fc.asyncProperty(fc.commands([step.map((s) => new Do(s))], { maxCommands: 30, size: 'max' }), async (commands) => {
      const world = await freshWorld();
      try {
        const model = emptyModel(false);
        for (const step of PRELUDE) await runSteps(model, world, [step]);
        await fc.asyncModelRun(() => ({ model, real: world }), commands);
      } finally {
        rmSync(world.configDir, { recursive: true, force: true });
      }
    }),
    { seed, numRuns: RUNS },
  );
}, 120_000);
