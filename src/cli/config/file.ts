import { rmSync } from 'node:fs';
import { keyHint } from '../../contract/key-format.js';
import { readUntrusted, UntrustedFileError } from './untrusted-file.js';

export interface Profile {
  /** The key, when the profile keeps it in this file (the default). */
  apiKey?: string;
  /** Where the key is when the profile keeps it in the OS keyring instead (never both): that entry, and the key's hint for lists. */
  keyring?: KeyringRef;
  baseUrl?: string;
  /** When the saved key expires, as last seen in a key list; `hint` says which key that was. */
  keyExpiry?: { hint: string; id: string; expiresAt: string | null };
  /** A `keys rotate --overlap` not yet finished or cancelled (docs/contract.md §C8). */
  pendingRotation?: PendingRotation;
  /** The reference server's Svc-Server-Instance when the key was saved (docs/contract.md §B): a 401 from another run can say why. */
  serverInstance?: string;
}

/** An entry of the OS keyring: Secret Service, Keychain or Credential Manager. */
export interface KeyringRef {
  service: string;
  account: string;
  /** The hint of the key it holds, so that lists and the key-health step need not open the keyring. */
  hint: string;
}

/** The hint of the key the profile holds, wherever it keeps it; null when it holds none. */
export function savedKeyHint(profile: Readonly<Profile>): string | null {
  if (profile.keyring) return profile.keyring.hint;
  return profile.apiKey ? keyHint(profile.apiKey) : null;
}

/** Whether `apiKey` is the profile's key; a key kept in the keyring is known here by its hint. */
export function holdsKey(profile: Readonly<Profile>, apiKey: string): boolean {
  return profile.keyring ? profile.keyring.hint === keyHint(apiKey) : profile.apiKey === apiKey;
}

export interface PendingRotation {
  oldId: string;
  newId: string;
  since: string;
}

/**
 * The file as svc reads it: its profiles, and whatever else it holds, which
 * is kept as it is. `other` also holds `defaultProfile`, the profile used
 * when neither --profile nor SVC_PROFILE names one (`svc profile use`),
 * checked to be a string when present.
 */
export interface ConfigDocument {
  profiles: Record<string, Profile>;
  other: Record<string, unknown>;
}

/** The top-level field naming the default profile. */
export const DEFAULT_PROFILE_FIELD = 'defaultProfile';

/** Why the file's content is not a config svc can use, in words for its owner. */
export class ConfigShapeError extends Error {
  constructor(readonly problem: string) {
    super(problem);
    this.name = 'ConfigShapeError';
  }
}

/** Far more than thousands of profiles take: a file larger than this is not one svc wrote. */
const MAX_CONFIG_BYTES = 16 * 1024 * 1024;

/** The file's text, null when there is none; a file that is not a regular one, or too large, is a ConfigShapeError; any other failure to read it is the caller's to report. */
export function readConfigText(path: string): string | null {
  try {
    return readUntrusted(path, MAX_CONFIG_BYTES).text;
  } catch (error) {
    if (error instanceof UntrustedFileError) throw new ConfigShapeError(`it ${error.problem}`);
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
}

/** The document `text` holds (an absent file, null, is an empty config). */
export function parseConfig(text: string | null): ConfigDocument {
  return text === null ? { profiles: {}, other: {} } : parseText(text);
}

/**
 * The shape svc writes, checked before anything is used: a file that
 * differs (`[]`, `{"profiles":null}`, a profile that is a string) is refused
 * with what is wrong, rather than read as "no profiles" and then written
 * over by the next save. Fields svc does not know are kept.
 */
function parseText(text: string): ConfigDocument {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new ConfigShapeError(text.trim() === '' ? 'it is empty' : `it is not valid JSON (${(error as Error).message})`);
  }
  if (!isObject(value)) throw new ConfigShapeError(`it holds ${kind(value)}, where svc expects an object with "profiles"`);
  const { profiles = {}, ...other } = value;
  if (!isObject(profiles)) throw new ConfigShapeError(`its "profiles" is ${kind(profiles)}, where svc expects an object`);
  for (const [name, profile] of Object.entries(profiles)) checkProfile(name, profile);
  const chosen = other[DEFAULT_PROFILE_FIELD];
  if (chosen !== undefined && (typeof chosen !== 'string' || chosen === '')) {
    throw new ConfigShapeError(`its "${DEFAULT_PROFILE_FIELD}" is ${chosen === '' ? 'empty' : kind(chosen)}, where svc expects a profile's name`);
  }
  return { profiles: profiles as Record<string, Profile>, other };
}

/** The bytes svc writes for the document: tabs, no final newline (as conf, which wrote it before, did). */
export function serializeConfig(document: ConfigDocument): string {
  return JSON.stringify({ ...document.other, profiles: document.profiles }, undefined, '\t');
}

type FieldType = 'string' | 'string or null' | { [field: string]: FieldType };

/** The Profile interface, field by field, each optional. */
const PROFILE_FIELDS: Record<string, FieldType> = {
  apiKey: 'string',
  keyring: { service: 'string', account: 'string', hint: 'string' },
  baseUrl: 'string',
  keyExpiry: { hint: 'string', id: 'string', expiresAt: 'string or null' },
  pendingRotation: { oldId: 'string', newId: 'string', since: 'string' },
  serverInstance: 'string',
};

function checkProfile(name: string, profile: unknown): void {
  const where = `profile ${JSON.stringify(name)}`;
  if (!isObject(profile)) throw new ConfigShapeError(`${where} is ${kind(profile)}, where svc expects an object`);
  for (const [field, type] of Object.entries(PROFILE_FIELDS)) {
    if (profile[field] !== undefined) checkField(where, field, profile[field], type);
  }
  // A profile that says "keyring" never falls back to a key in the file: one with both is not svc's to guess about.
  if (profile.apiKey !== undefined && profile.keyring !== undefined) {
    throw new ConfigShapeError(`${where} has both "apiKey" and "keyring", where svc expects the key in one place`);
  }
}

function checkField(where: string, path: string, value: unknown, type: FieldType): void {
  const what = `the "${path}" of ${where}`;
  if (typeof type === 'string') {
    if (typeof value === 'string' || (value === null && type === 'string or null')) return;
    throw new ConfigShapeError(`${what} is ${kind(value)}, where svc expects a ${type}`);
  }
  if (!isObject(value)) throw new ConfigShapeError(`${what} is ${kind(value)}, where svc expects an object`);
  for (const [field, inner] of Object.entries(type)) checkField(where, `${path}.${field}`, value[field], inner);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** What a JSON value is, in words. */
function kind(value: unknown): string {
  if (value === null) return 'null';
  if (value === undefined) return 'missing';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

/** Clearing up after a failure: the failure is what gets reported, not a second one on the way out. */
export function removeQuietly(path: string): void {
  try {
    rmSync(path, { force: true });
  } catch {
    // See above.
  }
}
