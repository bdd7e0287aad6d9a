import type { ApiClient } from '../client/api.js';
import { ApiError, NetworkError, UnexpectedResponseError } from '../client/errors.js';
import { header } from '../client/headers.js';
import { findSecret, readKey, readKeyList, type KeyView } from '../client/key-view.js';
import type { CreateKeyRequest } from '../contract/types.js';
import type { Context } from './context.js';
import { CliError, ExitCode, MaybeCreatedError } from './errors.js';
import { escapeControls, printJson, relativeTime, styleFor, visible } from './output.js';

/** A key the server just made: its document as it came, and the secret found in it, if any. */
export interface NewKey {
  document: unknown;
  secret: string | null;
  view: KeyView;
  /** The server's clock when it answered, for "expires in …". */
  nowMs: number;
}

/** The server answered, but svc cannot tell which part of the answer is the secret (docs/contract.md §C6). */
export class SecretNotFoundError extends CliError {
  constructor(id: string | null) {
    super(
      [
        "The key was created, but svc could not find its secret in the server's answer, printed on stdout as it came",
        "(svc looks for a 'secret' field, or one value of the form sk_ + 64 letters and digits).",
        `If the secret is there, store it now; if not, revoke the key (${revokeCommand(id)}) and tell the service's operators.`,
      ].join('\n'),
      ExitCode.failure,
    );
    this.name = 'SecretNotFoundError';
  }
}

/**
 * POST /user/api-keys. When the answer is lost, is a 5xx or cannot be read,
 * the key may exist all the same: look once for keys of that name made
 * since the request began, name them, and offer to revoke them on a terminal.
 */
export async function createKey(ctx: Context, client: ApiClient, request: CreateKeyRequest): Promise<NewKey> {
  const began = ctx.deps.now();
  try {
    const { body } = await client.createKey(request);
    return { document: body, secret: findSecret(body), view: readKey(body), nowMs: client.serverNow() };
  } catch (error) {
    if (!mayHaveCreated(error)) throw error;
    // A body svc cannot parse may still hold the secret: print what there is.
    if (error instanceof UnexpectedResponseError && error.text.trim() !== '') {
      const text = ctx.io.stdoutIsTTY ? escapeControls(error.text) : error.text;
      ctx.io.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
    }
    throw new MaybeCreatedError(error, await lookForOrphans(ctx, client, request.name, began));
  }
}

function mayHaveCreated(error: unknown): boolean {
  return (
    (error instanceof NetworkError && error.mayHaveReachedServer) ||
    (error instanceof ApiError && error.status >= 500) ||
    error instanceof UnexpectedResponseError
  );
}

/**
 * "Since the request began" is read on the server's clock. Its Date header
 * has whole seconds, so a clock within 2 s of ours is taken to be ours
 * (allowing for ordinary skew); a farther one is estimated from the header,
 * with room for its rounding.
 */
function serverSince(beganMs: number, dateHeader: string | null, localNow: number): number {
  const serverNow = Date.parse(dateHeader ?? '');
  if (!Number.isFinite(serverNow) || Math.abs(serverNow - localNow) <= 2_000) return beganMs - 250;
  return beganMs + (serverNow + 500 - localNow) - 1_500;
}

async function lookForOrphans(ctx: Context, client: ApiClient, name: string, beganMs: number): Promise<string[]> {
  let orphans: KeyView[];
  try {
    // One look: after a failed create, minutes of backoff would help nobody.
    const list = await client.listKeys({ maxRetries: 0 });
    const since = serverSince(beganMs, header(list, 'date'), ctx.deps.now());
    orphans = readKeyList(list.body).filter((k) => k.name === name && k.id !== null && k.createdAt !== null && k.createdAt >= since);
  } catch (error) {
    return [`svc could not look for it (${(error as Error).message}): run \`svc keys list\` before you try again.`];
  }
  const quoted = `'${visible(name)}'`;
  if (orphans.length === 0) {
    return [`No key named ${quoted} has appeared since the request began: it most likely did not take effect.`];
  }
  const lines = [
    `It did take effect: ${orphans.length === 1 ? 'a key' : `${orphans.length} keys`} named ${quoted} appeared since the request began, and no one has seen ${orphans.length === 1 ? 'its secret' : 'their secrets'}.`,
  ];
  const revoked = await offerToRevoke(ctx, client, orphans);
  for (const key of orphans) {
    const created = new Date(key.createdAt!).toISOString();
    lines.push(
      revoked.has(key.id!)
        ? `  ${visible(key.id!)}  created ${created}  revoked now`
        : `  ${visible(key.id!)}  created ${created}  revoke it: ${revokeCommand(key.id)}`,
    );
  }
  return lines;
}

/** On a terminal, the keys nobody can use are revoked on the spot if the person agrees. */
async function offerToRevoke(ctx: Context, client: ApiClient, orphans: KeyView[]): Promise<Set<string>> {
  const revoked = new Set<string>();
  if (!ctx.canPrompt) return revoked;
  for (const key of orphans) {
    ctx.msg.warn(`Made by this request, its secret never shown: ${visible(key.id!)}, created ${new Date(key.createdAt!).toISOString()}`);
  }
  const prompts = await ctx.prompts();
  const what = orphans.length === 1 ? 'it' : `these ${orphans.length} keys`;
  // No by default: a key of the same name made a moment earlier by someone who did see its secret looks the same.
  const { answerOr } = await import('./prompt.js');
  const question = prompts.confirm(`Revoke ${what} now? Without the secret nobody can use ${orphans.length === 1 ? 'it' : 'them'}.`, false);
  if (!(await answerOr(question, false))) {
    return revoked;
  }
  for (const key of orphans) {
    try {
      await client.revokeKey(key.id!);
      revoked.add(key.id!);
    } catch (error) {
      ctx.msg.warn(`Could not revoke ${visible(key.id!)}: ${(error as Error).message}`);
    }
  }
  return revoked;
}

function revokeCommand(id: string | null): string {
  return id === null ? 'find its id with `svc keys list`, then `svc keys revoke <id>`' : `svc keys revoke ${visible(id)}`;
}

/**
 * Shows a new key: the one and only time its secret can be seen. The secret
 * (or, when svc cannot tell which part it is, the whole answer) reaches
 * stdout before anything else is said. With --json a caller that prints a
 * larger document of its own passes `printDocument: false`.
 */
export function showNewKey(ctx: Context, key: NewKey, printDocument = true): void {
  const { io, msg } = ctx;
  if (ctx.globals.json) {
    if (printDocument) printJson(io, key.document);
  } else if (key.secret === null) {
    printJson(io, key.document);
  } else if (!io.stdoutIsTTY) {
    io.stdout.write(`${key.secret}\n`);
  } else {
    msg.success(`Created ${describeNewKey(key)}.`);
    io.stdout.write(`\n  ${styleFor(io.colorStdout).bold(escapeControls(key.secret))}\n\n`);
  }
  if (key.secret === null) throw new SecretNotFoundError(key.view.id);
  warnOnlyTime(ctx, key.view.id);
}

/** Said on stderr wherever a new key's secret is printed (docs/contract.md §C3), `svc api` included. */
export function warnOnlyTime(ctx: Context, id: string | null): void {
  ctx.msg.warn(
    'This is the only time this secret is shown: store it now. ' +
      `If it is lost, it cannot be recovered: revoke the key (${revokeCommand(id)}) and create a new one.`,
  );
}

function describeNewKey({ view, nowMs }: NewKey): string {
  const parts = [`key${view.name === null ? '' : ` '${visible(view.name)}'`}${view.id === null ? '' : ` (${visible(view.id)})`}`];
  if (view.expiresKnown) parts.push(view.expiresAt === null ? 'never expires' : `expires ${relativeTime(view.expiresAt, nowMs)}`);
  if (view.workspaceId !== null) parts.push(`workspace ${visible(view.workspaceId)}`);
  return parts.join(', ');
}
