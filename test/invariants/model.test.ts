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
import { afterAll, beforeAll, it } from 'vitest';
import { clockStep, modelSeed, profileStep, runSequence, StepsCommand } from '../helpers/key-model.js';
import { startLocalServer, svc, type LocalServer } from '../helpers/in-process.js';

/** 3 to 12 s on two cores, quiet or shared. */
const RUNS = 40;
const seed = modelSeed();

let server: LocalServer;
beforeAll(async () => {
  server = await startLocalServer({ plan: 'pro' });
});
afterAll(() => server?.stop());

it(`${RUNS} random sequences of svc commands, clock moves and faults keep the server and the config file as the model says`, async () => {
  console.info(`model: seed ${seed}; replay it with SVC_MODEL_SEED=${seed} npx vitest run test/invariants/model.test.ts`);
  const step = fc.oneof({ weight: 12, arbitrary: profileStep({ faults: true }) }, { weight: 1, arbitrary: clockStep });
  await fc.assert(
    fc.asyncProperty(fc.commands([step.map((s) => new StepsCommand([s]))], { maxCommands: 30, size: 'max' }), (commands) =>
      runSequence(server, (args, env, options) => svc(args, env, options), false, commands),
    ),
    { seed, numRuns: RUNS },
  );
}, 120_000);
