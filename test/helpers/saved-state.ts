/**
 * What a `--data` file holds, read as a restarting server reads it: the
 * snapshot and the journal beside it (docs/contract.md §B, "The data file").
 * A test that checks what is on disk reads it here, not the snapshot's bytes
 * alone, which hold only what the last compaction wrote.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { loadState } from '../../src/server/persistence.js';

// Typed loosely, as the JSON of the file it stands for was: tests pick what they check.
export async function savedState(file: string): Promise<any> {
  const state = await loadState(file);
  if (!state) throw new Error(`${file} does not exist`);
  return state;
}

/** The data file's bytes and its journal's, one after the other, as text: what a check for a leaked secret must search, and what a refused change must leave as it was. */
export function savedBytes(file: string): string {
  const journals = readdirSync(dirname(file)).filter((name) => name.startsWith(`${basename(file)}.journal.`));
  return [file, ...journals.map((name) => join(dirname(file), name))].map((path) => readFileSync(path, 'latin1')).join('');
}
