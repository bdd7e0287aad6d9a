/**
 * README.md's console examples, run for real: every ```console block, in
 * order, in one world (a reference server started by the tour's own
 * `svc serve --local`, a home of its own), each `$` line through svc's
 * main() on a terminal of TOUR_COLUMNS columns. scripts/readme-examples.mjs
 * writes what they print into the README; test/docs/readme-tour.test.ts
 * fails when the README no longer has the shape of what they print.
 *
 * Only the shell the README uses is understood: `svc …`, `VAR=value svc …`,
 * `VAR=$(svc …)` (stdout captured, stderr on the terminal), `echo "$VAR" |
 * svc …`, `svc … | cut -f…`, `svc … | jq …` (stdout piped to a program the
 * tour does not run: svc's output must be JSON, and none is shown), `svc … |
 * head -N`, `mkdir -p ~/PATH`, `echo WORD > ~/PATH` (the file written; its
 * directory must be there, as in a shell), `cd ~/PATH && LINE` (LINE run
 * there, in a directory that must be there), `echo $?` and `svc serve --local
 * [--port N]`, a server of the tour's own at the README's address (a second
 * one on another port for a second service; $KEY is the key its banner
 * printed). A block may be preceded by a directive:
 * `<!-- tour: server stopped -->` (nothing listens at the server's address
 * during the block) or `<!-- tour: first: LINE; LINE -->` (lines run,
 * unshown, before the block).
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { Readable, Writable } from 'node:stream';
import { createUndiciTransport, type Transport } from '../src/client/transport.js';
import type { Deps } from '../src/cli/terminal/deps.js';
import type { IO } from '../src/cli/terminal/io.js';
import { main } from '../src/cli/app/main.js';
import type { Prompter } from '../src/cli/terminal/prompt.js';

/** The width of the terminal the README's examples are shown on. */
export const TOUR_COLUMNS = 100;

/** The address svc uses by default, and `svc serve --local` listens on: what the README shows, wherever the tour's server is. */
const DEFAULT_URL = 'http://127.0.0.1:8787';
/** Nothing listens on port 9 (discard): the connection is refused at once. */
const REFUSING_URL = 'http://127.0.0.1:9';
/**
 * The home directory the README shows, and the tour's own: as long as each
 * other, so that a message naming a path breaks where it would for the
 * README's reader, on any machine (hence /tmp, not the machine's tmpdir).
 */
const README_HOME = '/home/someone';
const TOUR_HOME = '/tmp/me';

export interface TourCommand {
  /** The command as the README shows it, after `$ `. */
  line: string;
  /** The lines the README shows under it, without the blank lines that separate it from the next. */
  output: string[];
  /** Blank lines between this command's output and the next command. */
  gap: number;
}

export interface TourBlock {
  /** The block's body in README.md: from just after ```console and its newline up to the closing fence. */
  start: number;
  end: number;
  directive: string | null;
  commands: TourCommand[];
}

/** Every ```console block of `readme`, with what it shows. */
export function readTour(readme: string): TourBlock[] {
  const blocks: TourBlock[] = [];
  for (const match of readme.matchAll(/(?:<!-- tour: (.*?) -->\n)?```console\n([\s\S]*?)```/g)) {
    const start = match.index + match[0].indexOf('```console\n') + '```console\n'.length;
    const commands: TourCommand[] = [];
    for (const text of match[2]!.replace(/\n$/, '').split('\n')) {
      if (text.startsWith('$ ')) commands.push({ line: text.slice(2), output: [], gap: 0 });
      else if (commands.length === 0) throw new Error(`README.md: a console block begins with "${text}", not with a $ command`);
      else commands.at(-1)!.output.push(text);
    }
    for (const command of commands) {
      while (command.output.at(-1) === '') {
        command.output.pop();
        command.gap++;
      }
    }
    blocks.push({ start, end: start + match[2]!.length, directive: match[1] ?? null, commands });
  }
  return blocks;
}

export interface TourRun {
  /** Each command line as run: the README's key ids replaced by those of the keys the tour made. */
  lines: string[][];
  /** What each command printed, as a terminal shows it. */
  outputs: string[][][];
}

const KEY_ID = /\bkey_[a-z0-9]{20}\b/g;

/**
 * Runs every command of every block. A key id the README shows stands for
 * the key the tour made in its place: the ids of a command's output are
 * paired, in order, with those the README shows under it, and the commands
 * after it are run with the tour's.
 */
export async function runTour(blocks: TourBlock[]): Promise<TourRun> {
  const world = new World();
  const ids = new Map<string, string>();
  const ours = (line: string) => line.replace(KEY_ID, (id) => ids.get(id) ?? id);
  try {
    const run: TourRun = { lines: [], outputs: [] };
    for (const block of blocks) {
      await world.nextMinute();
      world.stopped = block.directive === 'server stopped';
      const first = block.directive?.match(/^first: (.*)$/)?.[1];
      for (const line of first?.split('; ') ?? []) await world.run(line);
      const lines: string[] = [];
      const outputs: string[][] = [];
      for (const command of block.commands) {
        const line = ours(command.line);
        const output = await world.run(line);
        const theirs = command.output.join('\n').match(KEY_ID) ?? [];
        const found = elide(command.output, output).join('\n').match(KEY_ID) ?? [];
        theirs.forEach((id, i) => {
          if (!ids.has(id) && found[i] !== undefined) ids.set(id, found[i]!);
        });
        lines.push(line);
        outputs.push(output);
      }
      run.lines.push(lines);
      run.outputs.push(outputs);
    }
    return run;
  } finally {
    await world.close();
  }
}

/**
 * What the README shows of `actual` under a command whose README output is
 * `shown`: all of it, except where the README cuts it short. A line of
 * `...` alone ends what it shows, after as many lines as it shows before
 * it; a line ending in ` ...` stands for the message that begins with what
 * precedes it (or, once the wording has changed, with the first sentence of
 * the message in its place), the lines it was broken into included.
 */
export function elide(shown: string[], actual: string[]): string[] {
  const out: string[] = [];
  let next = 0;
  for (const [i, line] of shown.entries()) {
    if (/^\s*\.\.\.$/.test(line)) {
      while (out.length < i && next < actual.length) out.push(actual[next++]!);
      if (next < actual.length) out.push(line);
      return out;
    }
    if (!line.endsWith(' ...')) continue;
    const prefix = line.slice(0, -' ...'.length);
    let at = actual.findIndex((real, j) => j >= next && real.startsWith(prefix));
    if (at === -1) at = Math.min(next + (i - out.length), actual.length - 1);
    if (at < next) continue;
    out.push(...actual.slice(next, at));
    const cut = actual[at]!;
    out.push(`${cut.startsWith(prefix) ? prefix : (/^.*?\.(?= |$)/.exec(cut)?.[0] ?? cut)} ...`);
    next = at + 1;
    // The rest of a message the renderer broke to the terminal's width.
    while (next < actual.length && actual[next]!.startsWith('  ') && !actual[next]!.startsWith('   ')) next++;
  }
  return [...out, ...actual.slice(next)];
}

/** The README with each command as run and its output replaced by what it printed. */
export function patchReadme(readme: string, blocks: TourBlock[], run: TourRun): string {
  let patched = readme;
  // From the last block back, so that the offsets of those before stay right.
  for (let b = blocks.length - 1; b >= 0; b--) {
    const block = blocks[b]!;
    const body = block.commands
      .map((command, c) =>
        [`$ ${run.lines[b]![c]!}`, ...elide(command.output, run.outputs[b]![c]!), ...Array<string>(command.gap).fill('')].join('\n'),
      )
      .join('\n');
    patched = `${patched.slice(0, block.start)}${body}\n${patched.slice(block.end)}`;
  }
  return patched;
}

/**
 * The shape of output: ids, secrets, key hints and numbers replaced by
 * placeholders, runs of spaces inside a line (table columns) by two, and
 * trailing spaces dropped; lines, their order, indentation, column headers
 * and words stay.
 */
export function shape(lines: string[]): string {
  return lines
    .map((line) =>
      line
        .replace(/sk_[A-Za-z0-9]{64}/g, 'sk_SECRET')
        .replace(/sk_[A-Za-z0-9]{4}…[A-Za-z0-9]{4}/g, 'sk_HINT')
        .replace(/\b(key|ws|usr)_[a-z0-9]{20}\b/g, '$1_ID')
        .replace(/\d+/g, 'N')
        .replace(/(?<=\S) {2,}/g, '  ')
        .trimEnd(),
    )
    .join('\n');
}

/** A question asked during the tour is a mistake in it: nobody is there to answer. */
const NOBODY: Prompter = new Proxy({} as Prompter, {
  get: (_, method) => () => Promise.reject(new Error(`the README tour asked a question (${String(method)}); its commands must ask none`)),
});

/** A server the tour started, at a port of its own, that the README shows at `readmeUrl`. */
interface TourServer {
  url: string;
  adminToken: string;
  stop: () => void;
  done: Promise<number>;
}

/** The tour's world: its home, its variables, its servers and the last exit status. */
class World {
  readonly #home = mkdtempSync(TOUR_HOME);
  /** The working directory of the line being run, when it began with `cd`. */
  #cwd: string | undefined;
  readonly #vars = new Map<string, string>();
  readonly #transport: Transport = createUndiciTransport();
  /** By the address the README shows for each: the default for `svc serve --local`, `http://127.0.0.1:N` with `--port N`. */
  readonly #servers = new Map<string, TourServer>();
  #status = 0;
  stopped = false;

  async run(line: string): Promise<string[]> {
    let match: RegExpMatchArray | null;
    if (line === 'echo $?') return [String(this.#status)];
    if ((match = line.match(/^cd ~\/(\S+) && (.*)$/))) {
      const dir = join(this.#home, match[1]!);
      if (!existsSync(dir)) throw new Error(`${line}: no such directory ${dir} (the README must make it first)`);
      this.#cwd = dir;
      try {
        return await this.run(match[2]!);
      } finally {
        this.#cwd = undefined;
      }
    }
    if ((match = line.match(/^mkdir -p ~\/(\S+)$/))) {
      mkdirSync(join(this.#home, match[1]!), { recursive: true });
      return [];
    }
    if ((match = line.match(/^echo (\w+) > ~\/(\S+)$/))) {
      const file = join(this.#home, match[2]!);
      // As the shell does: the directory must be there (the README makes it first).
      if (!existsSync(dirname(file))) throw new Error(`${line}: no such directory ${dirname(file)} (the README must make it first)`);
      writeFileSync(file, `${match[1]}\n`);
      return [];
    }
    if ((match = line.match(/^(svc .*?) \| head -(\d+)$/))) {
      const result = await this.#svc(match[1]!, { pipeStdout: true });
      return [...result.screen, ...this.#shown(result.stdout).slice(0, Number(match[2]))];
    }
    if ((match = line.match(/^svc serve --local(?: --port (\d+))?$/))) return this.#serve(match[1] === undefined ? DEFAULT_URL : `http://127.0.0.1:${match[1]}`);
    if ((match = line.match(/^(\w+)=\$\((svc .*)\)$/))) {
      const result = await this.#svc(match[2]!, { pipeStdout: true });
      this.#vars.set(match[1]!, result.stdout.trim());
      return result.screen;
    }
    if ((match = line.match(/^echo "\$(\w+)" \| (svc .*)$/))) return (await this.#svc(match[2]!, { stdin: `${this.#var(match[1]!)}\n` })).screen;
    if ((match = line.match(/^(svc .*?) \| cut -f([\d,]+)$/))) {
      const fields = match[2]!.split(',').map((f) => Number(f) - 1);
      const result = await this.#svc(match[1]!, { pipeStdout: true });
      const cut = result.stdout.trimEnd().split('\n').map((row) => fields.map((f) => row.split('\t')[f] ?? '').join('\t'));
      return [...result.screen, ...cut];
    }
    if ((match = line.match(/^(svc .*?) \| jq /))) {
      const result = await this.#svc(match[1]!, { pipeStdout: true });
      JSON.parse(result.stdout);
      return result.screen;
    }
    if ((match = line.match(/^((?:\w+=\S+ )*)(svc .*)$/))) {
      const env = Object.fromEntries([...match[1]!.matchAll(/(\w+)=(\S+) /g)].map(([, name, value]) => [name!, this.#expand(value!)]));
      return (await this.#svc(match[2]!, { env })).screen;
    }
    throw new Error(`the README tour does not know how to run: ${line}`);
  }

  /**
   * The server's clock a minute on, so that each block starts with a rate
   * window of its own: the whole tour is more requests than the free plan
   * allows in one minute, and a wait would change what it prints.
   */
  async nextMinute(): Promise<void> {
    for (const server of this.#servers.values()) {
      const answer = await this.#transport({
        method: 'POST',
        url: `${server.url}/_local/clock`,
        headers: { authorization: `Bearer ${server.adminToken}`, 'content-type': 'application/json' },
        body: JSON.stringify({ advanceSeconds: 60 }),
        timeoutMs: 10_000,
      });
      if (answer.status !== 200) throw new Error(`the tour's server did not move its clock: ${answer.status} ${answer.text}`);
    }
  }

  async close(): Promise<void> {
    for (const server of this.#servers.values()) {
      server.stop();
      await server.done;
    }
    rmSync(this.#home, { recursive: true, force: true });
  }

  #var(name: string): string {
    const value = this.#vars.get(name);
    if (value === undefined) throw new Error(`the README tour uses $${name} before setting it`);
    return value;
  }

  #expand(text: string): string {
    return text.replace(/\$(\w+)/g, (_, name: string) => this.#var(name));
  }

  /** Started in the background, as a person leaves it running in another terminal; its key is $KEY. */
  async #serve(readmeUrl: string): Promise<string[]> {
    let stop = () => {};
    const { io, screen } = this.#io({});
    const done = main(['serve', '--local', '--port', '0'], io, {
      ...this.#deps(),
      onSignal: (_signals, listener) => {
        stop = () => listener('SIGINT');
        return () => {};
      },
    });
    for (let waited = 0; !/API key\s+sk_/.test(screen()); waited += 10) {
      if (waited > 10_000) throw new Error(`svc serve --local did not start:\n${screen()}`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const url = /listening on (http:\/\/\S+)/.exec(screen())![1]!;
    this.#vars.set('KEY', /API key\s+(sk_\w+)/.exec(screen())![1]!);
    this.#servers.set(readmeUrl, { url, adminToken: /admin\s+(\S+)/.exec(screen())![1]!, stop: () => stop(), done });
    return this.#shown(screen());
  }

  async #svc(command: string, options: { pipeStdout?: boolean; stdin?: string; env?: Record<string, string> }) {
    const argv = this.#expand(command).split(' ').slice(1);
    const { io, screen, stdout } = this.#io(options);
    this.#status = await main(argv, io, this.#deps());
    return { screen: this.#shown(screen()), stdout: stdout() };
  }

  #io(options: { pipeStdout?: boolean; stdin?: string; env?: Record<string, string> }) {
    let screen = '';
    let piped = '';
    const sink = (append: (text: string) => void) =>
      new Writable({
        decodeStrings: false,
        write(chunk, _encoding, done) {
          append(String(chunk));
          done();
        },
      });
    const terminal = sink((text) => (screen += text));
    const io: IO = {
      stdout: options.pipeStdout ? sink((text) => (piped += text)) : terminal,
      stderr: terminal,
      stdin: Readable.from(options.stdin === undefined ? [] : [Buffer.from(options.stdin)]),
      stdinIsTTY: options.stdin === undefined,
      stdoutIsTTY: !options.pipeStdout,
      stderrIsTTY: true,
      colorStdout: false,
      colorStderr: false,
      columns: TOUR_COLUMNS,
      rows: 40,
      env: { HOME: this.#home, XDG_CONFIG_HOME: join(this.#home, '.config'), XDG_CACHE_HOME: join(this.#home, '.cache'), ...options.env },
      invokedAs: 'svc',
      cwd: this.#cwd,
    };
    return { io, screen: () => screen, stdout: () => piped };
  }

  #deps(): Deps {
    return {
      now: () => Date.now(),
      sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
      schedule: () => () => {},
      random: Math.random,
      onSignal: () => () => {},
      prompter: NOBODY,
      // The README's addresses lead to the tour's servers, or to a port where nothing listens while they are "stopped"
      // (or before the README starts one there).
      transport: (req) => {
        const origin = new URL(req.url).origin;
        const server = this.#servers.get(origin);
        const to = this.stopped || !server ? REFUSING_URL : server.url;
        return this.#transport({ ...req, url: to + req.url.slice(origin.length) });
      },
    };
  }

  /** What a terminal shows, as the README would: its servers at the README's addresses, its home as the README's. */
  #shown(text: string): string[] {
    if (text === '') return [];
    let shown = text.replaceAll(this.#home, README_HOME);
    for (const [readmeUrl, server] of this.#servers) shown = shown.replaceAll(server.url, readmeUrl);
    return shown.replace(/\n$/, '').split('\n');
  }
}
