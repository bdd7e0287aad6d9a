/** How `svc status --all` looks: one row per profile, and its --json document (docs/status-all.schema.json). */
import { NetworkError } from '../../client/errors.js';
import type { KeyState, ProfileStatus } from '../operations/status.js';
import type { Column } from '../terminal/renderer.js';
import { tone, type Segment } from '../text/text.js';
import { describeFailure, failureDocument } from './failure.js';
import { shown } from './keys.js';

const STATE_TEXT: Record<KeyState, string> = {
  live: 'live',
  rejected: 'rejected (401)',
  unreachable: 'unreachable',
  failed: 'failed',
  unreadable: 'not read from the keyring',
  none: 'no key',
};

/** A key state that makes `status --all` fail: every one but a working key and no key at all. */
export function failed(state: KeyState): boolean {
  return state !== 'live' && state !== 'none';
}

/** What stopped a profile's check, in one line: the failure's first, or for no answer the network's own words. */
function detail(status: ProfileStatus, verbose: boolean): string {
  const { failure, state, report } = status;
  if (state === 'live') return report.rateLimit?.limited ? 'rate limited' : '';
  if (state === 'none' || state === 'rejected' || failure === undefined) return '';
  if (failure instanceof NetworkError) return shown(failure.message);
  // A keyring's failure in its own words (KeyringError's problem; the class is not loaded for this), not the line naming the entry.
  const problem = (failure as { problem?: unknown }).problem;
  if (state === 'unreadable' && typeof problem === 'string') return problem;
  return describeFailure(failure, { verbose, originShown: true }).lines[0] ?? '';
}

export function statusAllColumns(verbose: boolean): Column<ProfileStatus>[] {
  const mark = ({ state }: ProfileStatus): Segment =>
    state === 'live' ? tone(`✓ ${STATE_TEXT[state]}`, 'green') : failed(state) ? tone(`✗ ${STATE_TEXT[state]}`, 'red') : tone(STATE_TEXT[state], 'dim');
  return [
    {
      header: 'PROFILE',
      human: (s) => (s.isActive ? tone(`* ${shown(s.report.profile)}`, 'bold') : `  ${shown(s.report.profile)}`),
      plain: (s) => s.report.profile,
      maxWidth: 32,
    },
    { header: 'SERVER', human: (s) => shown(s.report.baseUrl ?? ''), plain: (s) => s.report.baseUrl ?? '', dropRank: 2 },
    {
      header: 'KEY',
      human: (s) => (s.report.key?.hint == null ? tone('-', 'dim') : s.report.key.store === 'keyring' ? `${s.report.key.hint} (keyring)` : s.report.key.hint),
      plain: (s) => s.report.key?.hint ?? '',
      dropRank: 3,
    },
    { header: 'STATUS', human: mark, plain: (s) => s.state },
    { header: 'DETAIL', human: (s) => tone(detail(s, verbose), 'dim'), plain: (s) => detail(s, verbose), dropRank: 1, maxWidth: 60 },
  ];
}

/**
 * The --json document: one entry per profile, each `svc status --json`'s
 * document for that profile (its key's failure as a failed command's
 * `error`, or null) with `state`, `default` and `active` beside it.
 */
export function statusAllDocument(statuses: readonly ProfileStatus[], verbose: boolean) {
  return {
    ok: !statuses.some((s) => failed(s.state)),
    profiles: statuses.map((s) => ({
      ...s.report,
      state: s.state,
      default: s.isDefault,
      active: s.isActive,
      error: s.failure === undefined || s.state === 'none' ? null : failureDocument(s.failure, describeFailure(s.failure, { verbose })).error,
    })),
  };
}
