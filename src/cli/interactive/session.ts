import { createContext, type Context } from '../context.js';
import { InterruptedError, PromptCancelledError } from '../errors.js';
import type { IO } from '../io.js';
import { printRows, visible, wrap } from '../output.js';
import { describeFailure, printFailure } from '../report.js';
import { keyColumns } from '../commands/keys/list.js';
import { ACTIONS, labelOf, type ActionName } from './actions.js';
import { loadView, type View } from './view.js';

/** Lines kept free below the table for what an action says (its messages, a failure). */
const MESSAGE_ROOM = 6;

/**
 * `svc` on a terminal with no command: who you are, your keys, and a menu of
 * the same commands the flags run. Everything is drawn on stderr, so the
 * session is one screen even when stdout is elsewhere. Only Esc or Ctrl-C
 * at the menu, Quit, or Ctrl-C outside a prompt end it (docs/contract.md
 * §C7): a failed action is shown and the menu comes back.
 */
export async function runSession(start: Context): Promise<void> {
  let ctx = forSession(start);
  let view: View | undefined;
  for (;;) {
    view ??= await loadView(ctx);
    const choices = menuFor(view);
    draw(ctx, view, choices.length);
    const prompts = await ctx.prompts();
    const choice = await prompts.menu<ActionName>('What next? (Esc to quit)', choices, defaultChoice(view));
    if (choice === null || choice === 'quit') return;
    const action = ACTIONS[choice];
    try {
      ctx = (await action.run(ctx, view)) ?? ctx;
    } catch (error) {
      // Esc or Ctrl-C in one of the action's questions: nothing was done, the same screen comes back.
      if (error instanceof PromptCancelledError) {
        ctx.msg.info(ctx.msg.style.dim('Cancelled.'));
        continue;
      }
      // Ctrl-C outside a prompt (a rate-limit countdown) ends the session, as it ends a command.
      if (error instanceof InterruptedError) throw error;
      printFailure(ctx.io, describeFailure(error, { verbose: ctx.globals.verbose === true }).lines);
    }
    view = undefined;
    // A secret printed by the action stays on screen until the person says it is stored.
    if ('showsSecret' in action && action.showsSecret) await pauseForSecret(ctx);
  }
}

async function pauseForSecret(ctx: Context): Promise<void> {
  try {
    await (await ctx.prompts()).pause('Stored it? Press Enter to go on.');
  } catch (error) {
    if (!(error instanceof PromptCancelledError)) throw error;
  }
}

/** The session's I/O: data drawn on the terminal's stderr alongside the prompts. */
function forSession(ctx: Context): Context {
  // The terminal stays the prototype, so its size is read live after a resize.
  const io: IO = Object.create(ctx.io, {
    stdout: { value: ctx.io.stderr },
    stdoutIsTTY: { value: true },
    colorStdout: { value: ctx.io.colorStderr },
  });
  return createContext(io, ctx.globals, ctx.deps);
}

/** What can be done from here: everything with a working key; otherwise what mends the session. */
function menuFor(view: View): { name: string; value: ActionName }[] {
  const working = view.credentials !== null && view.failure === null;
  return Object.entries(ACTIONS)
    .filter(([, action]) => (working || !action.needsKey) && (!('offered' in action) || action.offered(view)))
    .map(([name]) => ({ name: labelOf(name as ActionName, view), value: name as ActionName }));
}

/** The way out of the state shown: log in when there is no working key (quit when the environment's key overrides any), try again when there was no answer. */
function defaultChoice(view: View): ActionName | undefined {
  if (view.failure?.unauthenticated && view.credentials?.source === 'env') return 'quit';
  if (!view.credentials || view.failure?.unauthenticated) return 'login';
  if (view.failure) return 'refresh';
  return undefined;
}

function draw(ctx: Context, view: View, menuLength: number): void {
  const { style } = ctx.msg;
  const { io } = ctx;
  let used = 0;
  const out = (line: string) => {
    io.stderr.write(`${line}\n`);
    used += line.split('\n').length;
  };
  out('');
  out(`${style.bold('svc')}  profile ${style.cyan(ctx.profileName)}  ${style.dim(view.baseUrl)}`);
  if (!view.credentials && !view.failure) {
    out(style.yellow(wrap(`Not logged in: choose "${labelOf('login', view)}" to save a key for this profile.`, io.columns)));
    return;
  }
  if (view.failure) {
    printFailure(io, view.failure.lines);
    const mend = !view.failure.unauthenticated
      ? `Choose "${labelOf('refresh', view)}" once the server answers, or "${labelOf('profile', view)}".`
      : view.credentials?.source === 'env'
        ? 'SVC_API_KEY overrides every profile: quit, then put a working key in it or unset it.'
        : `Choose "${labelOf('login', view)}" or "${labelOf('profile', view)}".`;
    out(style.yellow(wrap(mend, io.columns)));
    return;
  }
  const source = view.credentials!.source === 'env' ? 'SVC_API_KEY' : 'profile';
  const ws = view.workspace;
  const shown = (value: string | null) => (value === null ? '-' : visible(value));
  out(`key ${view.inUse} (from ${source})`);
  if (ws === null) out(style.dim('workspace not reported by this server'));
  else {
    const rpm = ws.requestsPerMinute === null ? '' : `, ${ws.requestsPerMinute} requests/min`;
    out(`workspace ${shown(ws.name)}${ws.id === null ? '' : ` (${visible(ws.id)})`}  plan ${shown(ws.plan)}${rpm}`);
  }
  if (view.pending) {
    out(
      style.yellow(
        wrap(
          `rotation pending since ${view.pending.since}: ${visible(view.pending.oldId)} still works beside ${visible(view.pending.newId)}; finish it once nothing uses the old key`,
          io.columns,
        ),
      ),
    );
  }
  out('');
  if (view.keys.length === 0) {
    out('No keys.');
    out('');
    return;
  }
  // The menu (its question, its choices, a line of help) and room for messages stay on screen with the table.
  const menuHeight = Math.min(menuLength, 12) + 3;
  const fits = Math.max(3, io.rows - used - menuHeight - MESSAGE_ROOM - 3);
  const shownKeys = view.keys.length > fits ? view.keys.slice(0, fits - 1) : view.keys;
  printRows(io, keyColumns(view.inUse, view.nowMs), shownKeys);
  const more = view.keys.length - shownKeys.length;
  if (more > 0) out(style.dim(wrap(`… and ${more} more, older (the pickers search them all; \`svc keys list\` shows every one)`, io.columns)));
  out('');
}
