import type { KeyRecord } from '../contract/types.js';
import { isoTime } from './clock.js';
import { asciiJson } from './http.js';
import type { StoredKey } from './store.js';

/**
 * The key list's body, written as JSON text without building a record object
 * per key and serialising it on every request: on the busiest path of the
 * server (`GET /user/api-keys`), JSON.stringify of the records, and the UTF-8
 * encoding of the two-byte string that a hint's "…" made of the whole body
 * (header block included, once node joined them), cost more than all the
 * checks before it (callgrind, bench/request-instructions.mjs).
 *
 * So each key's record is kept as text up to its lastUsedAt, which is all
 * that changes from one request to the next; and the text is ASCII only, the
 * "…" written as the JSON escape \u2026, so the body is a one-byte string
 * that node sends in one write with the header block.
 */

/** What a key's text was made from: reused only while every one of them is still what the key holds. */
interface Fragment {
  id: string;
  name: string;
  hint: string;
  workspaceId: string;
  createdAt: number;
  expiresAt: number | null;
  enabled: boolean;
  status: KeyRecord['status'];
  /** The record's JSON from `{` up to and including `"lastUsedAt":`. */
  text: string;
}

/**
 * One fragment per key record, forgotten with the record. Checked against
 * the key's fields on every use rather than invalidated by each change:
 * keys change in several places (a PATCH, an undo after a failed save, a
 * reload that assigns fields in place), and a check cannot miss one.
 */
const fragments = new WeakMap<StoredKey, Fragment>();

/** The record of docs/contract.md §A5 as JSON text; equal to JSON.stringify(keyRecord), but ASCII only. */
export function keyRecordJson(key: StoredKey, status: KeyRecord['status']): string {
  let fragment = fragments.get(key);
  if (
    fragment === undefined ||
    fragment.status !== status ||
    fragment.enabled !== key.enabled ||
    fragment.id !== key.id ||
    fragment.name !== key.name ||
    fragment.hint !== key.hint ||
    fragment.workspaceId !== key.workspaceId ||
    fragment.createdAt !== key.createdAt ||
    fragment.expiresAt !== key.expiresAt
  ) {
    fragment = makeFragment(key, status);
    fragments.set(key, fragment);
  }
  return fragment.text + (key.lastUsedAt === null ? 'null}' : `"${usedTime(key.lastUsedAt)}"}`);
}

function makeFragment(key: StoredKey, status: KeyRecord['status']): Fragment {
  const record: Omit<KeyRecord, 'lastUsedAt'> = {
    id: key.id,
    name: key.name,
    hint: key.hint,
    enabled: key.enabled,
    status,
    workspaceId: key.workspaceId,
    createdAt: isoTime(key.createdAt),
    expiresAt: key.expiresAt === null ? null : isoTime(key.expiresAt),
  };
  // The record without its closing brace, then the last field's name: the same field order as keyRecord.
  const text = `${asciiJson(record).slice(0, -1)},"lastUsedAt":`;
  const { id, name, hint, workspaceId, createdAt, expiresAt, enabled } = key;
  return { id, name, hint, workspaceId, createdAt, expiresAt, enabled, status, text };
}

/**
 * The last lastUsedAt formatted, and its text: a key's use is stamped with
 * the clock of the request that lists it, so requests arriving in the same
 * millisecond share one.
 */
let lastUsedMs = Number.NaN;
let lastUsedText = '';

function usedTime(ms: number): string {
  if (ms !== lastUsedMs) {
    lastUsedText = isoTime(ms);
    lastUsedMs = ms;
  }
  return lastUsedText;
}

/** A page of the list (KeyList) from its records' JSON texts. */
export function keyListJson(records: string[], nextCursor: string | null): string {
  return `{"keys":[${records.join(',')}],"nextCursor":${nextCursor === null ? 'null' : asciiJson(nextCursor)}}`;
}
