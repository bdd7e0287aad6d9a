/**
 * A secret svc hands on in a CI job, told to the CI's own log masking
 * (docs/contract.md §C3, "Secrets in CI logs"). GitHub Actions masks, in
 * every later line of the job's log, each value a step registers with the
 * workflow command `::add-mask::VALUE`; its runner reads workflow commands
 * from a step's stdout and its stderr alike, and never logs the command's
 * line itself. GitLab CI has no such command: it masks only the CI/CD
 * variables marked "masked" in its settings, which a key made during the
 * job cannot be; there svc prints nothing of the kind (README, "In CI").
 */
import { readEnv } from './environment.js';

/** svc runs as a step of a GitHub Actions job: the runner sets GITHUB_ACTIONS to exactly `true`. */
export function onGitHubActions(env: NodeJS.ProcessEnv): boolean {
  return readEnv(env, 'GITHUB_ACTIONS') === 'true';
}

/**
 * The lines that register `secret` with the runner's masking. The runner
 * takes a command's value up to the end of its line, and unescapes `%25`,
 * `%0D` and `%0A`: the value is escaped so, and a secret of several lines
 * (the form of a server other than the reference one) is registered line
 * by line, as the runner masks what it logs line by line; no character of
 * a secret can end the command early or start another.
 */
export function addMaskCommands(secret: string): string[] {
  return secret
    .split(/\r\n|\r|\n/)
    .filter((line) => line.trim() !== '')
    .map((line) => `::add-mask::${line.replaceAll('%', '%25')}`);
}

/**
 * A line of a command's output that registers a value with the runner's
 * masking: on Actions, passed on as it is by svc's own masking (the runner
 * takes it and logs it as `::add-mask::***`); masked, svc would have the
 * runner mask the key's hint instead of the key. Only the command's exact
 * form (after leading blanks, as the runner reads it) counts.
 */
export const ADD_MASK_LINE = /^[ \t]*::add-mask::/;
