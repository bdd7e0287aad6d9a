import { UsageError } from '../errors/errors.js';

const UNIT_SECONDS: Record<string, number> = { s: 1, m: 60, h: 3_600, d: 86_400, w: 604_800 };

/** "30d", "12h", "90m", "2w", "45s" → milliseconds. */
export function parseDuration(text: string): number {
  const match = /^(\d+)\s*([smhdw])$/i.exec(text.trim());
  const amount = match ? Number(match[1]) : NaN;
  if (!match || !Number.isSafeInteger(amount) || amount <= 0) {
    throw new UsageError(`Invalid duration '${text}': use a positive whole number and a unit, like 30d, 12h, 90m, 2w or 45s.`);
  }
  return amount * UNIT_SECONDS[match[2]!.toLowerCase()]! * 1000;
}
