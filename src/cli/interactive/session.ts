import { createContext, type Context } from '../context.js';
import { ExitCode } from '../errors.js';
import type { IO } from '../io.js';
import { printRows, visible } from '../output.js';
import { describeFailure, printFailure } from '../report.js';
import { keyColumns } from '../commands/keys/list.js';
import { ACTIONS, type ActionName } from './actions.js';
import { loadView, type View } from './view.js';

/**
 * `svc` on a terminal with no command: who you are, your keys, and a menu of
 * the same commands the flags run. Everything is drawn on stderr, so the
 * session is one screen even when stdout is elsewhere.
 */
export async function runSession(start: Context): Promise<void> {
  let ctx = forSession(start);
  for (;;) {
    const view = await loadView(ctx);
    await draw(ctx, view);
    const prompts = await ctx.prompts();
    const choice = await prompts.menu<ActionName>(
      'What next? (Esc to quit)',
      Object.entries(ACTIONS)
        .filter(([, action]) => (view.credentials || !action.needsKey) && (!('offered' in action) || action.offered(view)))
        .map(([name, action]) => ({ name: action.label, value: name as ActionName })),
    );
    if (choice === null || choice === 'quit') return;
    try {
      ctx = (await ACTIONS[choice].run(ctx, view)) ?? ctx;
    } catch (error) {
      const { exitCode, lines } = describeFailure(error, { verbose: ctx.globals.verbose === true });
      // A rejected key or Ctrl-C ends the session; anything else is shown and the menu returns.
      if (exitCode === ExitCode.unauthenticated || exitCode === ExitCode.interrupted) throw error;
      printFailure(ctx.io, lines);
    }
  }
}

/** The session's I/O: data drawn on the terminal's stderr alongside the prompts. */
function forSession(ctx: Context): Context {
  // The terminal stays the prototype, so its width is read live after a resize.
  const io: IO = Object.create(ctx.io, {
    stdout: { value: ctx.io.stderr },
    stdoutIsTTY: { value: true },
    colorStdout: { value: ctx.io.colorStderr },
  });
  return createContext(io, ctx.globals, ctx.deps);
}

async function draw(ctx: Context, view: View): Promise<void> {
  const { style } = ctx.msg;
  const out = (line: string) => ctx.io.stderr.write(`${line}\n`);
  out('');
  out(`${style.bold('svc')}  profile ${style.cyan(ctx.profileName)}  ${style.dim(view.baseUrl)}`);
  if (!view.credentials) {
    out(style.yellow('Not logged in: choose "Log in" to save a key for this profile.'));
    return;
  }
  const source = view.credentials.source === 'env' ? 'SVC_API_KEY' : 'profile';
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
        `rotation pending since ${view.pending.since}: ${visible(view.pending.oldId)} still works beside ${visible(view.pending.newId)}; finish it once nothing uses the old key`,
      ),
    );
  }
  out('');
  if (view.keys.length === 0) out('No keys.');
  else printRows(ctx.io, keyColumns(view.inUse, view.nowMs), view.keys);
  out('');
}
