/** How `svc run --ephemeral` fails with a key made for the command: what became of the key, and how to revoke one that may still work. */
import { clip, shellWord } from '../text/text.js';
import { CliError, revokeCommand, UsageError } from './errors.js';

/** `--ephemeral WORD` where WORD is no duration: the command's name, most likely, taken for the option's value. */
export function commandTakenForLifetime(given: string): UsageError {
  return new UsageError(`--ephemeral takes '${clip(given, 200)}' for its duration: put -- before the command (svc run --ephemeral -- ${clip(given, 200)} …).`);
}

/** `--ephemeral` longer than `max`. */
export function lifetimeTooLong(given: string, max: string): UsageError {
  return new UsageError(`--ephemeral ${clip(given, 200)} is too long: a key made for one command lives at most ${max}.`);
}

/** Why the command was not run once its key was made: the key would not have been svc's to end. */
export type NotRunReason =
  | { kind: 'no-secret' }
  | { kind: 'no-id' }
  | { kind: 'no-expiry'; asked: string }
  | { kind: 'later-expiry'; given: string; asked: string };

function notRunWhy(reason: NotRunReason): string {
  switch (reason.kind) {
    case 'no-secret':
      return "svc could not find the new key's secret in the server's answer";
    case 'no-id':
      return "the server's answer gives no id for the new key, so svc could not revoke it afterwards";
    case 'no-expiry':
      return `the server gave the key no expiry svc can read (it was asked for ${reason.asked}), so nothing would end it should svc be killed`;
    case 'later-expiry':
      return `the server gave the key a later expiry, ${reason.given}, than the ${reason.asked} svc asked for`;
  }
}

/** The command was not run (`reason`); the key it made is revoked (`revokedId`), or, its id unknown, expires at `asked`. */
export function commandNotRun(reason: NotRunReason, revokedId: string | null, name: string, asked: string): CliError {
  return new CliError([
    `The command was not run: ${notRunWhy(reason)}.`,
    revokedId !== null ? `The key it made, ${clip(revokedId, 200)}, is revoked.` : `The key named '${clip(name, 200)}' expires at ${asked}; to revoke it before, ${revokeCommand(null)}.`,
  ]);
}

interface MadeKey {
  id: string;
  expiresAt: string;
}

/** "on a retry, after an answer that was lost" where `message` is null: what the 404 to the revoke was. */
const notFoundWhen = (message: string | null) => (message === null ? 'on a retry, after an answer that was lost' : clip(message, 200));

function notRevoked(key: MadeKey, what: string): CliError {
  return new CliError([`The key made for the command, ${clip(key.id, 200)}, ${what}.`, `It works until ${key.expiresAt}: revoke it with \`svc keys revoke ${shellWord(key.id)}\`.`]);
}

/** The revoke of the command's key failed (`message`). */
export function ephemeralRevokeFailed(key: MadeKey, message: string): CliError {
  return notRevoked(key, `could not be revoked: ${clip(message, 200)}`);
}

/** The revoke was answered 404 (`message`; null: on a retry after a lost answer), and the key still works. */
export function ephemeralStillWorks(key: MadeKey, message: string | null): CliError {
  return notRevoked(key, `was answered 404 to its revoke (${notFoundWhen(message)}), but it still works: it is not revoked`);
}

/** The revoke was answered 404 (`message`, as above), and whether the key still works could not be told (`why`). */
export function ephemeralMayWork(key: MadeKey, message: string | null, why: string): CliError {
  return new CliError([
    `The key made for the command, ${clip(key.id, 200)}, was answered 404 to its revoke (${notFoundWhen(message)}), and svc could not tell whether it still works (${clip(why, 200)}).`,
    `If it does, it works until ${key.expiresAt}: revoke it with \`svc keys revoke ${shellWord(key.id)}\`.`,
  ]);
}
