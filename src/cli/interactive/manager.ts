import { ApiError } from '../../client/errors.js';
import { keyHint } from '../../contract/key-format.js';
import { keyHealth } from '../program/after-command.js';
import type { Deps } from '../terminal/deps.js';
import { endingSignal, InterruptedError, notLoggedIn, PromptCancelledError } from '../errors/errors.js';
import type { IO } from '../terminal/io.js';
import { settled } from '../program/program.js';
import { Region } from '../terminal/region.js';
import { reportFailure } from '../views/failure.js';
import { clip, tone, type Line } from '../text/text.js';
import { isKeyInUse } from '../domain/keys.js';
import { resolveSession, withKey, type GlobalOptions, type ProfileSession } from '../session/session.js';
import { incompleteCaveat, keyColumns } from '../views/keys.js';
import { ACTIONS, labelOf, type ActionName } from './actions.js';
import { loadView, type View } from './view.js';

/**
 * `svc` on a terminal with no command: who you are, your keys, and a menu of
 * the same operations the commands run. Everything is drawn on stderr, so
 * the manager is one screen even when stdout is elsewhere. Each screen and
 * each action gets a session of its own, resolved afresh (the profile as it
 * is now, a deadline of its own); the key-health step follows every action,
 * as it follows every command. Only Esc or Ctrl-C at the menu, Quit,
 * Ctrl-C outside a prompt, or SIGTERM or SIGHUP (sent from outside the
 * session: a kill, a closed terminal) end it (docs/contract.md §C7): a
 * failed action is shown and the menu comes back.
 *
 * The screen is drawn in a region of the terminal (terminal/region.ts) that
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
    const health = view.failure ? [] : await keyHealth(screen, view.credentials, view.list);
    const choice = await ask(region, screen, view, health);
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
    } catch (error) {
      // Esc or Ctrl-C in one of the action's questions: nothing was done, the same screen comes back.
      if (error instanceof PromptCancelledError) session.render.info(tone('Cancelled.', 'dim'));
      // Ctrl-C outside a prompt (a rate-limit countdown) ends the manager, as it ends a command; so does a
      // SIGTERM or SIGHUP an action stopped for, once it has said what it must: no one at the menu sent it.
      else if ((error instanceof InterruptedError && error.silent) || stoppedFromOutside(error)) throw error;
      // The screen drawn next, with the same key, says the 401 in place of the table: said here too, it was said twice.
      else if (rejectsSessionKey(error, session)) session.render.failure(['The server rejected the key (401); the screen below says more.']);
      else reportFailure(error, { verbose: options.verbose === true }, session.render);
    }
    // A secret printed by the action (whatever came after it) stays on screen until the person says it is stored; Ctrl-C leaves it there.
    if (!(action.showsSecret && region.holdsData)) region.clear();
    else if (await storedSecret(session, region)) region.clear({ dropData: true });
    else {
      // Cleared, the secret could be lost before it was stored: it stays, and the person is told where.
      session.render.warn(SECRET_KEPT);
      region.leave();
    }
  }
}

function stoppedFromOutside(error: unknown): boolean {
  const signal = endingSignal(error);
  return signal === 'SIGTERM' || signal === 'SIGHUP';
}

/** A 401 to the key the session uses (not to a key being logged in with). */
function rejectsSessionKey(error: unknown, session: ProfileSession): boolean {
  return (
    error instanceof ApiError && error.status === 401 && session.credentials !== null && error.origin?.keyHint === keyHint(session.credentials.apiKey)
  );
}

/**
 * The screen and its menu, drawn again in place each time the terminal's
 * size changes while the menu waits: what fits changed with it. Returns
 * the choice, or null for Esc or Ctrl-C.
 */
async function ask(region: Region, screen: ProfileSession, view: View, health: readonly Line[]): Promise<ActionName | null> {
  const choices = menuFor(view);
  // Drawn again after a resize, the menu starts on the choice the person had moved to: keys pressed as the size
  // changed go on from there, not from the top.
  let current = defaultChoice(view);
  for (;;) {
    const shape = draw(screen, view, health, choices.length);
    const resized = new AbortController();
    const unsubscribe = screen.io.onResize?.(() => resized.abort());
    try {
      const choice = await (await screen.prompts()).menu<ActionName>('What next? (Esc to quit)', choices, {
        defaultValue: current,
        ...shape,
        until: resized.signal,
        onMove: (value) => (current = value),
      });
      if (!resized.signal.aborted) return choice;
    } finally {
      unsubscribe?.();
    }
    region.clear();
  }
}

const SECRET_KEPT = "The secret stays on the screen and in the terminal's scrollback: clear them yourself once it is stored.";

const STORED_IT = 'Stored it? Press Enter to clear the secret from the screen.';
/** After a resize the terminal may have rewrapped the secret into its scrollback, which region.ts then clears too: the person is told before Enter. */
const STORED_IT_RESIZED = "Stored it? The terminal was resized: Enter clears the secret from the screen and the terminal's scrollback.";

/** True once the person pressed Enter; false on Ctrl-C. A resize while the question waits asks it again, saying the scrollback goes too. */
async function storedSecret(session: ProfileSession, screen: Region): Promise<boolean> {
  const prompts = await session.prompts();
  const resized = new AbortController();
  const unsubscribe = screen.io.onResize?.(() => resized.abort());
  try {
    await prompts.pause(STORED_IT, resized.signal);
    return true;
  } catch (error) {
    if (!(error instanceof PromptCancelledError)) throw error;
    if (error.signal !== null || !resized.signal.aborted) return false;
  } finally {
    unsubscribe?.();
  }
  try {
    await prompts.pause(STORED_IT_RESIZED);
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

/** How the menu is drawn below a screen: the rows of choices it shows at once, and whether its line of keys fits. */
interface MenuFit {
  pageSize: number;
  help: boolean;
}

/** Something the screen may show, and the rows it takes at the terminal's width now. */
interface Part {
  rows: number;
  draw(): void;
}

/**
 * Draws the screen so that it and the menu below it fit the terminal: a
 * screen taller than the terminal would push its top into the scrollback,
 * where it cannot be cleared, and the next screen would be a second copy.
 * Every part is measured as the renderer breaks it at the width now. What
 * says who you are, what went wrong and the key's health is always drawn;
 * the menu keeps at least three choices, the table at least its header,
 * the key in use and how many more there are; the rest (the menu's line of
 * keys, a few more keys, the workspace, blank lines, more choices, the
 * rest of the keys) only as rows are left, in that order.
 */
function draw(session: ProfileSession, view: View, health: readonly Line[], menuLength: number): MenuFit {
  const { io, render } = session;
  const info = (...lines: Line[]): Part => ({ rows: render.messageRows('info', lines), draw: () => render.info(...lines) });
  const blank = info('');
  const title = info([tone('svc', 'bold'), '  profile ', tone(session.profileName, 'cyan'), '  ', tone(view.baseUrl, 'dim')]);
  /** Who you are or what is wrong; the workspace, when shown, comes after it, then the rest. */
  const state: Part[] = [];
  const rest: Part[] = [];
  let workspace: Part | null = null;
  if (!view.credentials && !view.failure) {
    state.push(
      info(
        tone(
          session.profileExists
            ? `${notLoggedIn(session.profileName)}: choose "${labelOf('login', view)}" to save one.`
            : `Profile '${clip(session.profileName, 200)}' does not exist yet: choose "${labelOf('login', view)}" to create it with a key, or "${labelOf('profile', view)}".`,
          'yellow',
        ),
      ),
    );
  } else if (view.failure) {
    const { lines } = view.failure;
    state.push({ rows: render.messageRows('failure', lines), draw: () => render.failure(lines) });
    const mend = !view.failure.unauthenticated
      ? `Choose "${labelOf('refresh', view)}" once the server answers, or "${labelOf('profile', view)}".`
      : view.credentials?.source === 'env'
        ? 'SVC_API_KEY overrides every profile: quit, then put a working key in it or unset it.'
        : `Choose "${labelOf('login', view)}" or "${labelOf('profile', view)}".`;
    state.push(info(tone(mend, 'yellow')));
  } else {
    const source = view.credentials!.source === 'env' ? 'SVC_API_KEY' : 'profile';
    state.push(info(`key ${view.inUse} (from ${source})`));
    const ws = view.workspace;
    const shown = (value: string | null) => (value === null ? '-' : clip(value, 200));
    const rpm = ws?.requestsPerMinute == null ? '' : `, ${ws.requestsPerMinute} requests/min`;
    workspace = info(
      ws === null
        ? tone('workspace not reported by this server', 'dim')
        : `workspace ${shown(ws.name)}${ws.id === null ? '' : ` (${shown(ws.id)})`}  plan ${shown(ws.plan)}${rpm}`,
    );
  }
  for (const line of health) rest.push({ rows: render.messageRows('warn', [line]), draw: () => render.warn(line) });
  const working = view.credentials !== null && view.failure === null;
  // Never shown as every key: a list svc could not read whole says so above the keys it has.
  const incomplete = view.list?.incomplete ?? null;
  if (working && incomplete !== null) rest.push(info(tone(incompleteCaveat(incomplete), 'yellow')));
  if (working && view.keys.length === 0) rest.push(info('No keys.'));
  const essential = [title, ...state, ...rest];

  let left = io.rows - essential.reduce((rows, part) => rows + part.rows, 0) - MENU_QUESTION;
  const take = (rows: number) => (rows <= left ? ((left -= rows), true) : false);
  const upTo = (rows: number) => {
    const taken = Math.max(0, Math.min(rows, left));
    left -= taken;
    return taken;
  };
  let pageSize = Math.max(1, upTo(Math.min(menuLength, MENU_LEAST)));
  const keys = working && view.keys.length > 0 ? tableFit(render, view) : null;
  let tableRows = keys && take(keys.least) ? keys.least : 0;
  const tooShort = keys && tableRows === 0 ? info(tone(`${view.keys.length} keys: the pickers search them all.`, 'dim')) : null;
  const shortNote = tooShort !== null && take(tooShort.rows);
  const help = take(MENU_HELP);
  if (keys && tableRows > 0) tableRows += upTo(Math.min(keys.most, TABLE_FIRST) - tableRows);
  const optional = [workspace, blank, blank, keys && tableRows > 0 ? blank : null].map((part) => part !== null && take(part.rows));
  pageSize += upTo(Math.min(menuLength, MENU_MOST) - pageSize);
  if (keys && tableRows > 0) tableRows += upTo(keys.most - tableRows);

  const [showWorkspace, topBlank, headerBlank, tableBlank] = optional;
  if (topBlank) blank.draw();
  for (const part of [title, ...state]) part.draw();
  if (showWorkspace) workspace!.draw();
  for (const part of rest) part.draw();
  if (headerBlank) blank.draw();
  if (keys && tableRows > 0) {
    keys.draw(tableRows);
    if (tableBlank) blank.draw();
  } else if (shortNote) tooShort!.draw();
  return { pageSize, help };
}

/** Rows of the menu besides its choices: its question, and the blank row and line of keys below the choices. */
const MENU_QUESTION = 1;
const MENU_HELP = 2;
/** Choices the menu shows at once: at least these, however short the terminal, and at most. */
const MENU_LEAST = 3;
const MENU_MOST = 12;
/** Rows the key table takes before the workspace line, blank lines and more choices do: a few keys are all shown. */
const TABLE_FIRST = 6;

/**
 * The key table in a given number of rows: its header, the newest keys,
 * the key in use in place of the last of them when it is older, and a line
 * saying how many more there are. `least` is the fewest rows worth drawing;
 * `most`, every key.
 */
function tableFit(render: ProfileSession['render'], view: View): { least: number; most: number; draw(rows: number): void } {
  const { keys } = view;
  const inUse = keys.findIndex((key) => isKeyInUse(key, view.inUse) === true);
  const more = (count: number, lifted: boolean): Line => {
    const long = `… and ${count} more${lifted ? '' : ', older'}: the pickers search them all, \`svc keys list\` shows them`;
    // Only the short form when the long one would take more than a row.
    return tone(render.messageRows('info', [long]) > 1 ? `… and ${count} more${lifted ? '' : ', older'}` : long, 'dim');
  };
  const moreRows = render.messageRows('info', [more(keys.length, true)]);
  const most = 1 + keys.length;
  return {
    least: Math.min(most, 1 + Math.min(keys.length, 1) + moreRows),
    most,
    draw(rows) {
      if (rows >= most) {
        render.table(keyColumns(view.inUse, view.nowMs, render.columns), keys);
        return;
      }
      const count = Math.max(1, rows - 1 - moreRows);
      const lifted = inUse >= count;
      const shown = lifted ? [...keys.slice(0, count - 1), keys[inUse]!] : keys.slice(0, count);
      render.table(keyColumns(view.inUse, view.nowMs, render.columns), shown);
      render.info(more(keys.length - shown.length, lifted));
    },
  };
}
