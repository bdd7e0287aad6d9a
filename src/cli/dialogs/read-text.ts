import { UsageError } from '../errors/errors.js';
import type { Session } from '../session/session.js';

/** All of a stream as text: stdin, a pipe, a terminal to Ctrl-D. */
export async function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  return Buffer.concat(chunks).toString('utf8');
}

export interface Typed {
  /** The terminal, as the person named it: `stdin`, or a path such as /dev/tty. */
  source: string;
  /** What svc waits for, said first: "Reading … from the terminal: …". */
  prompt: string;
  /** How to give the text without a person, for a command that runs unattended. */
  otherwise: string;
}

/**
 * Text a person types on a terminal, to Ctrl-D. A script would wait on it
 * for ever, so it is refused where a question is (--no-input, CI set),
 * and said first even with --quiet, as a question is asked.
 */
export async function readTyped(session: Session, terminal: NodeJS.ReadableStream, typed: Typed): Promise<string> {
  refuseUnattended(session, typed);
  session.render.awaiting(typed.prompt);
  return readAll(terminal);
}

/** Stdin to its end: read as readTyped reads a terminal when it is one. */
export function readStdin(session: Session, typed: Typed): Promise<string> {
  return session.io.stdinIsTTY ? readTyped(session, session.io.stdin, typed) : readAll(session.io.stdin);
}

/** The refusal of readTyped, for a command that checks what it will read before it reads any of it. */
export function refuseUnattended(session: Session, typed: Typed): void {
  if (!session.unattended) return;
  const why = session.options.input === false ? '--no-input' : 'CI set';
  throw new UsageError(`${typed.source} is a terminal, and with ${why} svc waits for no one to type. ${typed.otherwise}`);
}
