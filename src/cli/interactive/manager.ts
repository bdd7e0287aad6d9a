import { afterCommand } from '../after-command.js';
import type { Deps } from '../deps.js';
import { InterruptedError, PromptCancelledError } from '../errors.js';
import type { IO } from '../io.js';
import { settled } from '../program.js';
import { reportFailure } from '../report.js';
import { clip, tone } from '../render/text.js';
import { resolveSession, withKey, type GlobalOptions, type ProfileSession } from '../session.js';
import { keyColumns } from '../views/keys.js';
import { ACTIONS, labelOf, type ActionName } from './actions.js';
import { loadView, type View } from './view.js';

/** Lines kept free below the table for what an action says (its messages, a failure). */
const MESSAGE_ROOM = 6;

/**
 * `svc` on a terminal with no command: who you are, your keys, and a menu of
 * the same operations the commands run. Everything is drawn on stderr, so
 * the manager is one screen even when stdout is elsewhere. Each screen and
 * each action gets a session of its own, resolved afresh (the profile as it
 * is now, a deadline of its own); the key-health step follows every action,
 * as it follows every command. Only Esc or Ctrl-C at the menu, Quit, or
 * Ctrl-C outside a prompt end it (docs/contract.md §C7): a failed action is
 * shown and the menu comes back.
 */
export async function runManager(terminal: IO, start: GlobalOptions, deps: Deps): Promise<void> {
  const io = onStderr(terminal);
  let options = start;
  const fresh = () => resolveSession(io, options, deps, 'credentials');
  for (;;) {
    const screen = await fresh();
    const view = await loadView(screen);
    const choices = menuFor(view);
    draw(screen, view, choices.length);
    const choice = await (await screen.prompts()).menu<ActionName>('What next? (Esc to quit)', choices, defaultChoice(view));
    if (choice === null || choice === 'quit') return;
    const action = ACTIONS[choice];
    const session = await fresh();
    try {
      const keySession = session.credentials ? await withKey(session, session.credentials) : null;
      const switched = await settled(keySession ?? session, () => action.run({ session, keySession, view }));
      if (switched) options = { ...options, profile: switched.profile };
      else await afterCommand(session, action.needsKey ? session.credentials : null, view.list);
    } catch (error) {
      // Esc or Ctrl-C in one of the action's questions: nothing was done, the same screen comes back.
      if (error instanceof PromptCancelledError) {
        session.render.info(tone('Cancelled.', 'dim'));
        continue;
      }
      // Ctrl-C outside a prompt (a rate-limit countdown) ends the manager, as it ends a command.
      if (error instanceof InterruptedError && error.silent) throw error;
      reportFailure(io, error, { verbose: options.verbose === true }, session.render);
    }
    // A secret printed by the action stays on screen until the person says it is stored.
    if (action.showsSecret) await pauseForSecret(session);
  }
}

async function pauseForSecret(session: ProfileSession): Promise<void> {
  try {
    await (await session.prompts()).pause('Stored it? Press Enter to go on.');
  } catch (error) {
    if (!(error instanceof PromptCancelledError)) throw error;
  }
}

/** The manager's I/O: data drawn on the terminal's stderr alongside the prompts. */
function onStderr(io: IO): IO {
  // The terminal stays the prototype, so its size is read live after a resize.
  return Object.create(io, {
    stdout: { value: io.stderr },
    stdoutIsTTY: { value: true },
    colorStdout: { value: io.colorStderr },
  });
}

/** What can be done from here: everything with a working key; otherwise what mends the session. */
function menuFor(view: View): { name: string; value: ActionName }[] {
  const working = view.credentials !== null && view.failure === null;
  return Object.entries(ACTIONS)
    .filter(([, action]) => (working || !action.needsKey) && (action.offered?.(view) ?? true))
    .map(([name]) => ({ name: labelOf(name as ActionName, view), value: name as ActionName }));
}

/** The way out of the state shown: log in when there is no working key (quit when the environment's key overrides any), try again when there was no answer. */
function defaultChoice(view: View): ActionName | undefined {
  if (view.failure?.unauthenticated && view.credentials?.source === 'env') return 'quit';
  if (!view.credentials || view.failure?.unauthenticated) return 'login';
  if (view.failure) return 'refresh';
  return undefined;
}

function draw(session: ProfileSession, view: View, menuLength: number): void {
  const { io, render } = session;
  let used = 0;
  const out = (...lines: Parameters<typeof render.info>) => {
    render.info(...lines);
    used += lines.length;
  };
  out('');
  out([tone('svc', 'bold'), '  profile ', tone(session.profileName, 'cyan'), '  ', tone(view.baseUrl, 'dim')]);
  if (!view.credentials && !view.failure) {
    out(
      tone(
        session.profileExists
          ? `Not logged in: choose "${labelOf('login', view)}" to save a key for this profile.`
          : `Profile '${clip(session.profileName, 200)}' does not exist yet: choose "${labelOf('login', view)}" to create it with a key, or "${labelOf('profile', view)}".`,
        'yellow',
      ),
    );
    return;
  }
  if (view.failure) {
    render.failure(view.failure.lines);
    const mend = !view.failure.unauthenticated
      ? `Choose "${labelOf('refresh', view)}" once the server answers, or "${labelOf('profile', view)}".`
      : view.credentials?.source === 'env'
        ? 'SVC_API_KEY overrides every profile: quit, then put a working key in it or unset it.'
        : `Choose "${labelOf('login', view)}" or "${labelOf('profile', view)}".`;
    out(tone(mend, 'yellow'));
    return;
  }
  const source = view.credentials!.source === 'env' ? 'SVC_API_KEY' : 'profile';
  const ws = view.workspace;
  const shown = (value: string | null) => (value === null ? '-' : clip(value, 200));
  out(`key ${view.inUse} (from ${source})`);
  if (ws === null) out(tone('workspace not reported by this server', 'dim'));
  else {
    const rpm = ws.requestsPerMinute === null ? '' : `, ${ws.requestsPerMinute} requests/min`;
    out(`workspace ${shown(ws.name)}${ws.id === null ? '' : ` (${shown(ws.id)})`}  plan ${shown(ws.plan)}${rpm}`);
  }
  if (view.pending) {
    out(
      tone(
        `rotation pending since ${view.pending.since}: ${shown(view.pending.oldId)} still works beside ${shown(view.pending.newId)}; finish it once nothing uses the old key`,
        'yellow',
      ),
    );
  }
  out('');
  if (view.keys.length === 0) {
    out('No keys.', '');
    return;
  }
  // The menu (its question, its choices, a line of help) and room for messages stay on screen with the table.
  const menuHeight = Math.min(menuLength, 12) + 3;
  const fits = Math.max(3, io.rows - used - menuHeight - MESSAGE_ROOM - 3);
  const shownKeys = view.keys.length > fits ? view.keys.slice(0, fits - 1) : view.keys;
  render.table(keyColumns(view.inUse, view.nowMs, render.columns), shownKeys);
  const more = view.keys.length - shownKeys.length;
  if (more > 0) out(tone(`… and ${more} more, older (the pickers search them all; \`svc keys list\` shows every one)`, 'dim'));
  out('');
}
