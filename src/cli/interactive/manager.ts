import { afterCommand } from '../after-command.js';
import type { Deps } from '../deps.js';
import { InterruptedError, notLoggedIn, PromptCancelledError } from '../errors.js';
import type { IO } from '../io.js';
import { settled } from '../program.js';
import { Region } from '../render/region.js';
import { reportFailure } from '../report.js';
import { clip, tone, type Line, type Segment } from '../render/text.js';
import { displayWidth } from '../render/width.js';
import { resolveSession, withKey, type GlobalOptions, type ProfileSession } from '../session.js';
import { incompleteCaveat, keyColumns } from '../views/keys.js';
import { ACTIONS, labelOf, type ActionName } from './actions.js';
import { loadView, type View } from './view.js';

/** The menu's rows besides its choices: the question, a blank line and the line of help below them. */
const MENU_FRAME = 3;

/** Rows the table keeps however short the terminal: its header and a key, before the menu scrolls. */
const TABLE_LEAST = 4;

/**
 * `svc` on a terminal with no command: who you are, your keys, and a menu of
 * the same operations the commands run. Everything is drawn on stderr, so
 * the manager is one screen even when stdout is elsewhere. Each screen and
 * each action gets a session of its own, resolved afresh (the profile as it
 * is now, a deadline of its own); the key-health step follows every action,
 * as it follows every command. Only Esc or Ctrl-C at the menu, Quit, or
 * Ctrl-C outside a prompt end it (docs/contract.md §C7): a failed action is
 * shown and the menu comes back.
 *
 * The screen is drawn in a region of the terminal (render/region.ts) that
 * is cleared once an action is chosen, and the action's questions and
 * answers in another, cleared once it is done: what the action said is
 * written again above the next screen. So the terminal holds one copy of
 * the screen and of each message, however many actions ran. A new secret
 * stays until the person says it is stored, and is then cleared with the
 * rest, never written again.
 */
export async function runManager(terminal: IO, start: GlobalOptions, deps: Deps): Promise<void> {
  const region = new Region(terminal);
  const { io } = region;
  let options = start;
  const fresh = () => resolveSession(io, options, deps, 'credentials');
  for (;;) {
    const screen = await fresh();
    const view = await loadView(screen);
    const choices = menuFor(view);
    const pageSize = draw(screen, view, choices.length);
    const choice = await (await screen.prompts()).menu<ActionName>('What next? (Esc to quit)', choices, defaultChoice(view), pageSize);
    if (choice === null || choice === 'quit') return;
    // The action has the whole terminal; the screen comes back, redrawn, once it is done.
    region.clear();
    region.start(true);
    const action = ACTIONS[choice];
    const session = await fresh();
    try {
      const keySession = session.credentials ? await withKey(session, session.credentials) : null;
      const switched = await settled(keySession ?? session, () => action.run({ session, keySession, view }));
      if (switched) options = { ...options, profile: switched.profile };
      else await afterCommand(session, action.needsKey ? session.credentials : null, view.list);
    } catch (error) {
      // Esc or Ctrl-C in one of the action's questions: nothing was done, the same screen comes back.
      if (error instanceof PromptCancelledError) session.render.info(tone('Cancelled.', 'dim'));
      // Ctrl-C outside a prompt (a rate-limit countdown) ends the manager, as it ends a command.
      else if (error instanceof InterruptedError && error.silent) throw error;
      else reportFailure(error, { verbose: options.verbose === true }, session.render);
    }
    // A secret printed by the action (whatever came after it) stays on screen until the person says it is stored; Ctrl-C leaves it there.
    if (!(action.showsSecret && region.holdsData)) region.clear();
    else if (await storedSecret(session)) region.clear({ dropData: true });
    else region.leave();
  }
}

/** True once the person pressed Enter; false on Ctrl-C. */
async function storedSecret(session: ProfileSession): Promise<boolean> {
  try {
    await (await session.prompts()).pause('Stored it? Press Enter to clear the secret from the screen.');
    return true;
  } catch (error) {
    if (!(error instanceof PromptCancelledError)) throw error;
    return false;
  }
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

/**
 * Draws the screen, as much of the key list as fits with the menu below it:
 * a screen taller than the terminal would push its top where it cannot be
 * cleared. Returns how many choices the menu shows at once.
 */
function draw(session: ProfileSession, view: View, menuLength: number): number {
  const { io, render } = session;
  const page = (room: number) => Math.max(3, Math.min(menuLength, 12, room));
  let used = 0;
  const out = (...lines: Parameters<typeof render.info>) => {
    render.info(...lines);
    used += lines.reduce((rows: number, line) => rows + rowsOf(line, io.columns), 0);
  };
  out('');
  out([tone('svc', 'bold'), '  profile ', tone(session.profileName, 'cyan'), '  ', tone(view.baseUrl, 'dim')]);
  if (!view.credentials && !view.failure) {
    out(
      tone(
        session.profileExists
          ? `${notLoggedIn(session.profileName)}: choose "${labelOf('login', view)}" to save one.`
          : `Profile '${clip(session.profileName, 200)}' does not exist yet: choose "${labelOf('login', view)}" to create it with a key, or "${labelOf('profile', view)}".`,
        'yellow',
      ),
    );
    return page(io.rows - used - MENU_FRAME);
  }
  if (view.failure) {
    render.failure(view.failure.lines);
    used += view.failure.lines.reduce((rows: number, line) => rows + rowsOf(line, io.columns), 0);
    const mend = !view.failure.unauthenticated
      ? `Choose "${labelOf('refresh', view)}" once the server answers, or "${labelOf('profile', view)}".`
      : view.credentials?.source === 'env'
        ? 'SVC_API_KEY overrides every profile: quit, then put a working key in it or unset it.'
        : `Choose "${labelOf('login', view)}" or "${labelOf('profile', view)}".`;
    out(tone(mend, 'yellow'));
    return page(io.rows - used - MENU_FRAME);
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
  // Never shown as every key: a list svc could not read whole says so above the keys it has.
  const incomplete = view.list?.incomplete ?? null;
  if (incomplete !== null) out(tone(incompleteCaveat(incomplete), 'yellow'));
  if (view.keys.length === 0) {
    out('No keys.', '');
    return page(io.rows - used - MENU_FRAME);
  }
  // The menu gives up choices before the table gives up its last rows: its list scrolls.
  const choices = page(io.rows - used - MENU_FRAME - TABLE_LEAST);
  const fits = io.rows - used - MENU_FRAME - choices - 2;
  const more = (count: number) => tone(`… and ${count} more, older: the pickers search them all, \`svc keys list\` shows them`, 'dim');
  const shownKeys = view.keys.length > fits ? view.keys.slice(0, fits - rowsOf(more(view.keys.length), io.columns)) : view.keys;
  if (shownKeys.length === 0) {
    out(tone(`${view.keys.length} keys: the terminal is too short to list them (the pickers search them all)`, 'dim'), '');
    return choices;
  }
  render.table(keyColumns(view.inUse, view.nowMs, render.columns), shownKeys);
  if (shownKeys.length < view.keys.length) out(more(view.keys.length - shownKeys.length));
  out('');
  return choices;
}

/** Rows a line of the screen takes: more than its width alone says once the renderer breaks it between words. */
function rowsOf(line: Line, columns: number): number {
  const text = (Array.isArray(line) ? line : [line]).map((s: Segment) => (typeof s === 'string' ? s : s.text)).join('');
  const width = displayWidth(text);
  return width <= columns ? 1 : Math.ceil(width / Math.max(1, columns - 16));
}
