import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { homeEnv } from './home.js';

const run = promisify(execFile);
const ENDING = fileURLToPath(new URL('./ending.mjs', import.meta.url));

/** How a command on the terminal ended (ending.mjs): an exit with its code, or a death by a signal. */
export interface Ending {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  /** The terminal was in line mode again once the command was gone. */
  lineMode: boolean;
}

/**
 * How long a wait for the screen may last before the test fails: the wait ends as soon as the screen shows
 * what it waits for, so this is a watchdog, long enough for two test runs sharing two cores.
 */
export const SCREEN_WAIT_MS = 30_000;

/**
 * A real pseudo-terminal: the command runs in a private tmux server, keys are
 * typed with send-keys and the screen is read with capture-pane.
 */
export class Terminal {
  private readonly dir = mkdtempSync(join(tmpdir(), 'svc-tty-'));
  private readonly socket = join(this.dir, 'tmux.sock');
  private readonly exitFile = join(this.dir, 'exit');
  private readonly endingFile = join(this.dir, 'ending.json');

  private constructor() {}

  /**
   * `clipboard`: tmux accepts OSC 52 clipboard writes from the program into
   * a paste buffer, so a test can see whether one got through (see pasteBuffer()).
   * `ending`: the command runs under ending.mjs, which tells whether it exited
   * or died by a signal (see ending()).
   */
  static async start(
    command: string[],
    env: Record<string, string>,
    size: { columns: number; rows: number } = { columns: 100, rows: 40 },
    options: { clipboard?: boolean; ending?: boolean } = {},
  ): Promise<Terminal> {
    const term = new Terminal();
    // tmux hands its own environment (CI=true in CI, say) to the session, so
    // the command starts from an empty one holding only what the test gives.
    const vars = Object.entries({ TERM: 'xterm-256color', PATH: process.env.PATH!, ...homeEnv(), ...env });
    const argv = ['env', '-i', ...vars.map(([k, v]) => `${k}=${v}`), ...(options.ending ? [process.execPath, ENDING, term.endingFile] : []), ...command];
    const quoted = argv.map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
    // The shell outlives a Ctrl-C sent to the command (the whole foreground group gets SIGINT), so the exit status is still written.
    const script = `trap : INT; ${quoted}; echo $? > '${term.exitFile}'; sleep 600`;
    const clipboard = options.clipboard ? [';', 'set', '-g', 'set-clipboard', 'on'] : [];
    await term.tmux('new-session', '-d', '-x', String(size.columns), '-y', String(size.rows), 'sh', '-c', script, ...clipboard);
    return term;
  }

  private async tmux(...args: string[]): Promise<string> {
    const { stdout } = await run('tmux', ['-S', this.socket, '-f', '/dev/null', ...args]);
    return stdout;
  }

  /** The visible screen as text. */
  screen(): Promise<string> {
    return this.tmux('capture-pane', '-p', '-J');
  }

  /** The visible screen with its colours, as the SGR escapes tmux writes for them. */
  screenWithColour(): Promise<string> {
    return this.tmux('capture-pane', '-p', '-J', '-e');
  }

  /** The scrollback and the visible screen, as text. */
  history(): Promise<string> {
    return this.tmux('capture-pane', '-p', '-J', '-S', '-');
  }

  /**
   * The history once it shows `pattern`: a capture taken while svc redraws
   * (it clears its screen first) holds none of it, and the next one does.
   */
  async historyShowing(pattern: string | RegExp, timeoutMs = SCREEN_WAIT_MS): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    let history = await this.history();
    while (!(typeof pattern === 'string' ? history.includes(pattern) : pattern.test(history)) && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
      history = await this.history();
    }
    return history;
  }

  /** Keys as tmux names them: literal text, or 'Enter', 'Down', 'Space', 'C-c', 'Escape'. */
  async send(...keys: string[]): Promise<void> {
    for (const key of keys) {
      if (/^(Enter|Down|Up|Space|Escape|BSpace|Tab|C-[a-z])$/.test(key)) await this.tmux('send-keys', key);
      else await this.tmux('send-keys', '-l', key);
    }
  }

  /**
   * `text` reaches the program in one write, as a paste or fast typing
   * brings it: keys and all (`\r` is Enter, `\x1b[B` Down). send-keys
   * with several keys writes them one by one.
   */
  async paste(text: string): Promise<void> {
    await this.tmux('set-buffer', '-b', 'svc-paste', '--', text);
    // -r: line feeds stay as they are; -d: the buffer goes, so pasteBuffer() still sees only what the program put there.
    await this.tmux('paste-buffer', '-d', '-r', '-b', 'svc-paste');
  }

  /** tmux's newest paste buffer, where an OSC 52 clipboard write lands with `clipboard` on; null when there is none. */
  async pasteBuffer(): Promise<string | null> {
    return this.tmux('show-buffer').catch(() => null);
  }

  /** The pane's title, as OSC 0 and OSC 2 set it. */
  async title(): Promise<string> {
    return (await this.tmux('display-message', '-p', '#{pane_title}')).replace(/\n$/, '');
  }

  async resize(columns: number, rows: number): Promise<void> {
    await this.tmux('resize-window', '-x', String(columns), '-y', String(rows));
  }

  /** The screen once it shows `pattern` (a text, a pattern, or a test of the whole screen). */
  async waitFor(pattern: string | RegExp | ((screen: string) => boolean), timeoutMs = SCREEN_WAIT_MS): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    let screen = '';
    while (Date.now() < deadline) {
      screen = await this.screen();
      // Prompts break long lines themselves, so text is matched with its white space folded.
      const found =
        typeof pattern === 'string' ? fold(screen).includes(fold(pattern)) : pattern instanceof RegExp ? pattern.test(screen) : pattern(screen);
      if (found) return screen;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`Timed out waiting for ${pattern}; the screen was:\n${screen}`);
  }

  /** The command's exit status once it has ended. */
  async exitCode(timeoutMs = SCREEN_WAIT_MS): Promise<number> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (existsSync(this.exitFile)) {
        const text = readFileSync(this.exitFile, 'utf8').trim();
        if (text) return Number(text);
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`The command did not end; the screen was:\n${await this.screen()}`);
  }

  /** How the command ended, once it has (started with `ending`). */
  async ending(timeoutMs = SCREEN_WAIT_MS): Promise<Ending> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (existsSync(this.endingFile)) return JSON.parse(readFileSync(this.endingFile, 'utf8')) as Ending;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`The command did not end; the screen was:\n${await this.screen()}`);
  }

  /** The pid of the command started with `ending`, once it has started. */
  async pid(timeoutMs = SCREEN_WAIT_MS): Promise<number> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (existsSync(`${this.endingFile}.pid`)) return Number(readFileSync(`${this.endingFile}.pid`, 'utf8'));
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error('The command did not start');
  }

  async close(): Promise<void> {
    await this.tmux('kill-server').catch(() => undefined);
    rmSync(this.dir, { recursive: true, force: true });
  }
}

function fold(text: string): string {
  return text.replace(/\s+/g, ' ');
}
