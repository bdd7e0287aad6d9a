import type { Plan } from '../../src/contract/plans.js';

/** Writes a `--data` state file of one user with `keys` keys; returns the newest key's secret. */
export function writeManyKeys(path: string, options: { keys: number; plan?: Plan }): { secret: string; userId: string; workspaceId: string };
