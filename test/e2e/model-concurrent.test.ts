// tier: process
/**
 * The model-based test of test/invariants/model.test.ts, smaller, with the built
 * svc as processes: some steps run at once, on distinct profiles sharing
 * one config dir. Each profile touches only the keys made through it, so
 * steps that run together have one outcome whatever their order, and the
 * server and the config file must match the model after each round: no
 * profile change of one process is lost to another's.
 *
 * SVC_MODEL_SEED=<n> replays a seed that fast-check printed.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, it } from 'vitest';
import { svc } from '../helpers/cli.js';
import { clockStep, modelSeed, profileStep, runSequence, StepsCommand, type Runner, type Step } from '../helpers/key-model.js';
import { startLocalServer, type LocalServer } from '../helpers/in-process.js';

/** 4 to 8 s on two cores, quiet or shared. */
const RUNS = 5;
const seed = modelSeed();

let server: LocalServer;
beforeAll(async () => {
  server = await startLocalServer({ plan: 'pro' });
});
afterAll(() => server?.stop());

// --no-wait: a lost create is looked for once, as the in-process model's fake sleep would make a look of 30 s cost nothing; here it costs real time.
const run: Runner = async (args, env, options) => {
  const { exitCode, stdout, stderr } = await svc([...args, '--no-wait'], env, options);
  return { exitCode: exitCode ?? -1, stdout, stderr };
};

it(`${RUNS} random sequences, some steps run at once by svc processes on distinct profiles, keep the server and the config file as the model says`, async () => {
  console.info(`model: seed ${seed}; replay it with SVC_MODEL_SEED=${seed} npx vitest run test/e2e/model-concurrent.test.ts`);
  const alone = fc.oneof({ weight: 6, arbitrary: profileStep({ faults: true }) }, { weight: 1, arbitrary: clockStep }).map((s) => new StepsCommand([s]));
  // A fault rule is taken by whichever request comes first: steps that run together have none.
  const together = fc
    .uniqueArray(profileStep({ faults: false }), { minLength: 2, maxLength: 3, selector: (s: Step) => ('profile' in s ? s.profile : null) })
    .map((steps) => new StepsCommand(steps));
  await fc.assert(
    fc.asyncProperty(fc.commands([alone, together], { maxCommands: 10, size: 'max' }), (commands) => runSequence(server, run, true, commands)),
    { seed, numRuns: RUNS },
  );
}, 120_000);
