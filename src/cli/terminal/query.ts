/**
 * --query EXPRESSION: a JMESPath expression (https://jmespath.org) that
 * picks what stdout gets of the document a command prints under --json, as
 * `aws --query` and `az --query` do, so that a script needs no jq. The
 * library is loaded only when the option is given: every other command
 * starts without it (docs/contract.md §C3).
 */
import { UsageError } from '../errors/errors.js';
import { clip, jsonDocument, sanitize } from '../text/text.js';

export interface Query {
  /**
   * What stdout gets of the document --json prints as `json` (without the
   * final newline): a string raw, as `gh --jq` and `jq -r` print one,
   * anything else as JSON laid out as `layout` says. Throws
   * QueryFailedError when the expression cannot be applied to this
   * document (a function given a value of the wrong type).
   */
  print(json: string, layout: JsonLayout): string;
  /** Why the document went out whole: what the expression picks of it leaves out a secret it holds, which is shown only this once. */
  droppedSecret(): QueryFailedError;
}

/** A document as --json prints it (2-space indents), or on one line (a ready line read with `read`). */
export type JsonLayout = 'document' | 'line';

/** The expression failed on the document a command printed; the document went out whole instead. */
export class QueryFailedError extends UsageError {
  constructor(expression: string, message: string) {
    super([`--query ${shownExpression(expression)} ${message}.`, 'The document was printed whole instead.']);
    this.name = 'QueryFailedError';
  }
}

/**
 * `expression` compiled; one the library cannot parse, or that calls a
 * function it does not have or with the wrong number of arguments, is a
 * usage error (exit 2) before the command does anything.
 */
export async function compileQuery(expression: string): Promise<Query> {
  const jmespath = await import('@aws-lambda-powertools/jmespath');
  // The library's one entry point parses the expression (and keeps it parsed) before it evaluates it: against null, any
  // error but a type error (which depends on the document) is the expression's own.
  try {
    jmespath.search(expression, null as never);
  } catch (error) {
    if (!(error instanceof jmespath.JMESPathTypeError)) throw new UsageError([`--query ${shownExpression(expression)}: ${libraryMessage(error)}.`, QUERY_HELP]);
  }
  return {
    print(json, layout) {
      let result: unknown;
      try {
        // The document as --json prints it: what JSON.stringify leaves out (an undefined field) is not there to be found.
        result = jmespath.search(expression, JSON.parse(json) as never);
      } catch (error) {
        throw new QueryFailedError(expression, `could not be applied to the document: ${libraryMessage(error)}`);
      }
      if (typeof result === 'string') return rawText(result);
      return layout === 'line' ? jsonDocument(result, 0) : jsonDocument(result);
    },
    droppedSecret: () =>
      new QueryFailedError(expression, "leaves out the new key's secret, which is shown only this once (pick it too, e.g. '[key.id, key.secret]', or deliver it with --to-file)"),
  };
}

const QUERY_HELP = `--query takes a JMESPath expression (https://jmespath.org): --query "keys[?status=='enabled'].id"`;

function shownExpression(expression: string): string {
  return `'${clip(expression, 200)}'`;
}

/** The library's message without the expression it ends with (svc names it first), on one line, its control characters shown as escapes. */
function libraryMessage(error: unknown): string {
  return clip((error as Error).message.replace(/ in expression: [\s\S]*$/, '').replace(/\.$/, ''), 300);
}

/**
 * A string result as text: its newlines and tabs kept (a `join` of ids is
 * lines a shell loop reads), every other character that could move the
 * cursor or reorder text shown as an escape, as everywhere else.
 */
function rawText(text: string): string {
  return text
    .split('\n')
    .map((line) => line.split('\t').map(sanitize).join('\t'))
    .join('\n');
}
