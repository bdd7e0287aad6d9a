import { createPrompt, makeTheme, useMemo, usePagination, usePrefix, useState } from '@inquirer/core';
import figures from '@inquirer/figures';
import { useFilteredRows, useRedrawOnResize, type SearchConfig } from './search-prompt.js';

/**
 * Several rows of a list filtered as the person types, on inquirer's
 * hooks. Inquirer's checkbox takes a digit as "tick row N": a pasted name
 * with digits in it (`bulk-15`) ticked rows 1 and 5, keys nobody named.
 * Here every printable key, digits and spaces included, is filter text;
 * Tab marks or unmarks the active row, which stays marked whatever the
 * filter shows; Enter answers the marked rows, or, when none is marked,
 * the active row, as the one-key list does: a name pasted with its Enter
 * picks the key of that name, first among rows that only contain it
 * (search-prompt.ts's useFilteredRows, which also runs the filter in the
 * keypress handler: Enter answers for the text typed before it). Enter
 * with nothing to choose answers nothing.
 */
export const pickManyPrompt = createPrompt(<T>(config: SearchConfig<T>, done: (value: T[]) => void) => {
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
      // Each row as one short line: its columns' padding folded.
      setAnswer(chosen.map((row) => row.name.trim().replace(/ {2,}/g, '  ')));
      setStatus('done');
      done(chosen.map((row) => row.value));
      return true;
    },
    (current) => setMarked(marked.includes(current.index) ? marked.filter((i) => i !== current.index) : [...marked, current.index]),
  );

  const message = theme.style.message(config.message, status);
  const page = usePagination({
    items: rows,
    active,
    renderItem({ item, isActive }) {
      if (item.disabled) return theme.style.help(`  - ${config.fit(`${item.name} ${typeof item.disabled === 'string' ? item.disabled : '(disabled)'}`)}`);
      const box = marked.includes(item.index) ? theme.style.highlight(figures.circleFilled) : figures.circle;
      return isActive ? `${theme.style.highlight(figures.pointer)}${box} ${theme.style.highlight(config.fit(item.name))}` : ` ${box} ${config.fit(item.name)}`;
    },
    pageSize: config.pageSize(),
    loop: false,
  });
  if (status === 'done') return `${prefix} ${message} ${theme.style.answer(answer.join(', '))}`;
  // The header ends with the line as typed, spaces included: the core puts the cursor by it.
  const header = term === '' ? `${prefix} ${message}` : `${prefix} ${message} ${theme.style.highlight(term)}`;
  const description = rows[active]?.description;
  const enter = marked.length === 0 ? `${figures.pointer}'s row` : `the ${marked.length} marked`;
  const body = [
    rows.length === 0 && term !== '' ? theme.style.error('No results found') : page,
    ' ',
    description ? theme.style.highlight(description) : '',
    theme.style.help(config.fit(`type to filter • ↑↓ navigate • tab mark • ⏎ take ${enter}`)),
  ]
    .filter(Boolean)
    .join('\n')
    .trimEnd();
  return [header, body];
});
