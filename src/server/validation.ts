import { isPlan, PLANS, type Plan } from '../contract/plans.js';
import { HttpError } from './http.js';

type Body = Record<string, unknown>;

export const NAME_MAX_CODE_POINTS = 100;

export function invalid(message: string): HttpError {
  return new HttpError(400, 'INVALID_REQUEST', `Invalid request: ${message}`);
}

/** Any field outside `allowed` is an error, so a misspelt field never passes silently. */
export function onlyFields(body: Body, allowed: readonly string[]): void {
  for (const field of Object.keys(body)) {
    if (!allowed.includes(field)) throw invalid(`unknown field "${field}"`);
  }
}

export function has(body: Body, field: string): boolean {
  return Object.hasOwn(body, field);
}

/** Control characters and lone surrogates (which cannot be encoded as UTF-8) are refused. */
const FORBIDDEN_IN_NAME = /[\p{Cc}\p{Cs}]/u;

/** What is wrong with a name once trimmed, or null: the one rule for names, of the API and of the state file alike. */
export function nameProblem(name: string): string | null {
  if (FORBIDDEN_IN_NAME.test(name)) return 'must not contain control characters';
  const length = [...name].length;
  if (length < 1 || length > NAME_MAX_CODE_POINTS) return `must be 1 to ${NAME_MAX_CODE_POINTS} characters after trimming`;
  return null;
}

/** Trimmed; 1–100 code points; no control characters. */
export function validName(value: unknown, field: string): string {
  if (typeof value !== 'string') throw invalid(`"${field}" must be a string`);
  const name = value.trim();
  const problem = nameProblem(name);
  if (problem) throw invalid(`"${field}" ${problem}`);
  return name;
}

export function validPlan(value: unknown, field: string): Plan {
  if (!isPlan(value)) throw invalid(`"${field}" must be one of ${PLANS.join(', ')}`);
  return value;
}

export function validId(value: unknown, field: string): string {
  if (typeof value !== 'string' || value.length === 0) throw invalid(`"${field}" must be a non-empty string`);
  return value;
}

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/;

/**
 * Milliseconds since the epoch of an RFC 3339 date-time, which must carry
 * `Z` or a numeric offset; null when the text is not one. Fractions beyond
 * milliseconds are truncated. Leap seconds (`:60`) are refused: the server
 * cannot represent them.
 */
export function parseRfc3339(text: string): number | null {
  const m = RFC3339.exec(text);
  if (!m) return null;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return null;
  if (hour > 23 || minute > 59 || second > 59) return null;
  let offsetMinutes = 0;
  if (!m[8]) {
    const offsetHours = Number(m[10]);
    const offsetMins = Number(m[11]);
    if (offsetHours > 23 || offsetMins > 59) return null;
    offsetMinutes = (m[9] === '-' ? -1 : 1) * (offsetHours * 60 + offsetMins);
  }
  const millis = Number((m[7] ?? '').padEnd(3, '0').slice(0, 3));
  const date = new Date(0);
  // setUTCFullYear, unlike Date.UTC, does not map years 0–99 onto 1900–1999.
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute, second, millis);
  return date.getTime() - offsetMinutes * 60_000;
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

export interface CreateKeyInput {
  name: string;
  expiresAt: number | null;
}

/** `{"name", "expiresAt"?}`; `expiresAt` is null or a date-time after `now`. */
export function validCreateKey(body: Body, now: number): CreateKeyInput {
  onlyFields(body, ['name', 'expiresAt']);
  if (!has(body, 'name')) throw invalid('"name" is required');
  const name = validName(body.name, 'name');
  const raw = body.expiresAt;
  if (raw === undefined || raw === null) return { name, expiresAt: null };
  const expiresAt = typeof raw === 'string' ? parseRfc3339(raw) : null;
  if (expiresAt === null) {
    throw invalid('"expiresAt" must be null or an RFC 3339 date-time with Z or an offset, e.g. 2030-01-31T12:00:00Z');
  }
  if (expiresAt <= now) throw invalid('"expiresAt" must be in the future');
  return { name, expiresAt };
}

/** Exactly `{"enabled": boolean}`. */
export function validPatchKey(body: Body): boolean {
  onlyFields(body, ['enabled']);
  if (typeof body.enabled !== 'boolean') throw invalid('"enabled" is required and must be true or false');
  return body.enabled;
}
