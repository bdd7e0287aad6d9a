import { createPrompt, isDownKey, isEnterKey, isTabKey, isUpKey, makeTheme, useEffect, useKeypress, useMemo, usePagination, usePrefix, useRef, useState } from '@inquirer/core';
import figures from '@inquirer/figures';

/** A row of the list: what prompt.ts's Choice is, restated so this module depends on nothing of svc's. */
interface Row<T> {
  name: string;
  value: T;
  description?: string;
  disabled?: boolean | string;
  exact?: readonly string[];
}

export interface SearchConfig<T> {
  message: string;
  choices: readonly Row<T>[];
  /** The rows shown at once, asked at each drawing: a resized terminal gets as many as fit it now. */
  pageSize: () => number;
  /** A row's text cut to the terminal's width now: a row that wrapped would push the others, and the cursor's, off the list. */
  fit: (name: string) => string;
  /** Subscribes to the terminal's size changing (IO.onResize). */
  onResize?: (listener: () => void) => () => void;
}

/** Draws the list again when the terminal's size changes, rows cut to the new width, not at the next key. */
export function useRedrawOnResize(onResize: SearchConfig<unknown>['onResize']): void {
  const resizes = useRef(0);
  const [, setDrawnFor] = useState(0);
  useEffect(() => onResize?.(() => setDrawnFor(++resizes.current)), [onResize]);
}

/**
 * The rows whose name or description holds `term`, case aside; first those
 * of which it is a whole word (`exact`): a key's name typed whole and Enter
 * pick that key, not a newer one whose name merely begins with it.
 */
export function matching<R extends Row<unknown>>(choices: readonly R[], term: string): R[] {
  const needle = term.toLowerCase();
  const found = choices.filter((c) => `${c.name} ${c.description ?? ''}`.toLowerCase().includes(needle));
  const whole = needle.trim();
  if (whole === '') return found;
  const isWhole = (c: R) => c.exact?.some((word) => word.toLowerCase() === whole) === true;
  return [...found.filter(isWhole), ...found.filter((c) => !isWhole(c))];
}

const selectable = <T>(row: Row<T> | undefined): boolean => row !== undefined && !row.disabled;

/**
 * The filter and the cursor of a list filtered as the person types, both
 * changed in the keypress handler itself: inquirer's core draws again after
 * every key, before the next is handled, so Enter acts on the list for the
 * text typed before it, whatever came with it in one write. `enter` answers
 * (true) or not, with the active row; `tab` gets the active row; keys that
 * come once `done` change nothing.
 */
export function useFilteredRows<R extends Row<unknown>>(
  choices: readonly R[],
  done: boolean,
  enter: (active: R | undefined) => boolean,
  tab?: (active: R) => void,
): { term: string; rows: R[]; active: number } {
  const [term, setTerm] = useState('');
  const rows = useMemo(() => matching(choices, term), [choices, term]);
  const [active, setActive] = useState(() => rows.findIndex(selectable));
  useKeypress((key, rl) => {
    if (done) return;
    const current = rows[active];
    if (isEnterKey(key)) {
      // readline empties its line on Enter; unanswered, the text stays the filter.
      if (!enter(selectable(current) ? current : undefined)) rl.write(term);
    } else if (isUpKey(key) || isDownKey(key) || isTabKey(key)) {
      // readline's history (Up, Down) or a tab character would change the line; the filter stays.
      if (rl.line !== term) {
        rl.clearLine(0);
        rl.write(term);
      }
      if (isTabKey(key)) {
        if (selectable(current)) tab?.(current!);
        return;
      }
      const step = isUpKey(key) ? -1 : 1;
      let next = active + step;
      while (next >= 0 && next < rows.length && !selectable(rows[next])) next += step;
      if (selectable(rows[next])) setActive(next);
    } else if (rl.line !== term) {
      setTerm(rl.line);
      setActive(matching(choices, rl.line).findIndex(selectable));
    }
  });
  return { term, rows, active };
}

/**
 * The line of keys below a list, the same in every list svc draws (a
 * command's with no id, the manager's): what typing, the arrows, Tab and
 * Enter do. Tab marks only where several rows can be chosen.
 */
export function listHint(many: boolean, marked: number): string {
  if (!many) return 'type to filter • ↑↓ navigate • ⏎ select';
  return `type to filter • ↑↓ navigate • tab mark • ⏎ take ${marked === 0 ? `${figures.pointer}'s row` : `the ${marked} marked`}`;
}

/**
 * A list filtered as the person types, on inquirer's hooks and with the
 * look of its `search` prompt: every list of keys svc offers, in a command
 * with no id and in the manager alike, one row (`many` false) or several.
 * Inquirer's own search runs the filter in an effect and a promise, after
 * the keypress: an Enter that came in the same write as the text (a paste,
 * fast typing) answered with the row that was active before the text was
 * applied, while the screen then showed the filtered one. Here the filter
 * runs in the keypress handler (useFilteredRows): the row Enter answers is
 * the active row of the list for the text typed before it, and the line
 * left on screen names that same row. Inquirer's checkbox takes a digit as
 * "tick row N": a pasted name with digits in it (`bulk-15`) ticked rows 1
 * and 5, keys nobody named. Here every printable key, digits and spaces
 * included, is filter text. With `many`, Tab marks or unmarks the active
 * row, which stays marked whatever the filter shows, and Enter answers the
 * marked rows, or, when none is marked, the active row, as a one-row list
 * does: a name pasted with its Enter picks the key of that name, first
 * among rows that only contain it. Enter on a list with nothing to choose
 * answers nothing (docs/contract.md §C7).
 */
export const listPrompt = createPrompt(<T>(config: SearchConfig<T> & { many: boolean }, done: (value: T[]) => void) => {
  const theme = makeTheme();
  const [status, setStatus] = useState<'idle' | 'done'>('idle');
  // Rows are told apart by their place in config.choices: two may show the same text.
  const indexed = useMemo(() => config.choices.map((choice, index) => ({ ...choice, index })), [config.choices]);
  const [marked, setMarked] = useState<readonly number[]>([]);
  const [answer, setAnswer] = useState<readonly string[]>([]);
  const prefix = usePrefix({ status, theme });
  useRedrawOnResize(config.onResize);
  const { term, rows, active } = useFilteredRows(
    indexed,
    status === 'done',
    (current) => {
      const chosen = marked.length > 0 ? indexed.filter((row) => marked.includes(row.index)) : current === undefined ? [] : [current];
      if (chosen.length === 0) return false;
      // One row as it was shown; several, each as one short line, its columns' padding folded.
      setAnswer(config.many ? chosen.map((row) => row.name.trim().replace(/ {2,}/g, '  ')) : [chosen[0]!.name]);
      setStatus('done');
      done(chosen.map((row) => row.value));
      return true;
    },
    config.many ? (current) => setMarked(marked.includes(current.index) ? marked.filter((i) => i !== current.index) : [...marked, current.index]) : undefined,
  );

  const message = theme.style.message(config.message, status);
  const page = usePagination({
    items: rows,
    active,
    renderItem({ item, isActive }) {
      if (item.disabled) return theme.style.help(`  - ${config.fit(`${item.name} ${typeof item.disabled === 'string' ? item.disabled : '(disabled)'}`)}`);
      // The mark's box where several rows can be chosen; a one-row list has the same columns, the box left blank.
      const box = !config.many ? ' ' : `${marked.includes(item.index) ? theme.style.highlight(figures.circleFilled) : figures.circle} `;
      return isActive ? `${theme.style.highlight(figures.pointer)}${box}${theme.style.highlight(config.fit(item.name))}` : ` ${box}${config.fit(item.name)}`;
    },
    pageSize: config.pageSize(),
    loop: false,
  });
  if (status === 'done') return `${prefix} ${message} ${theme.style.answer(answer.join(', '))}`;
  // The header ends with the line as typed, spaces included: the core puts the cursor by it.
  const header = term === '' ? `${prefix} ${message}` : `${prefix} ${message} ${theme.style.highlight(term)}`;
  const description = rows[active]?.description;
  const body = [
    rows.length === 0 && term !== '' ? theme.style.error('No results found') : page,
    ' ',
    description ? theme.style.highlight(description) : '',
    theme.style.help(config.fit(listHint(config.many, marked.length))),
  ]
    .filter(Boolean)
    .join('\n')
    .trimEnd();
  return [header, body];
});
