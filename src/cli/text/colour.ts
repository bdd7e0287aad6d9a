/**
 * How much colour each stream gets: 0 (none), 1 (16 colours), 2 (256) or 3
 * (truecolor); the renderer uses only the 16 basic tones, which every level
 * paints alike. The rule is chalk's own for FORCE_COLOR (`1`/`2`/`3` force
 * that level even into a pipe, `0` or `false` turns colour off, empty or
 * `true` means level 1), with NO_COLOR (set and non-empty) above it, as
 * no-color.org asks; with neither, colour on a terminal only. Chalk cannot
 * decide this itself: it reads the process's environment when it loads,
 * and svc's IO may be another's (tests, the interactive manager).
 */
export type ColourLevel = 0 | 1 | 2 | 3;

export function colourLevel(noColor: string | undefined, forceColor: string | undefined, isTTY: boolean): ColourLevel {
  if (noColor) return 0;
  const forced = forcedLevel(forceColor);
  if (forced !== undefined) return forced;
  return isTTY ? 1 : 0;
}

/** FORCE_COLOR as chalk reads it; a value that is no level (`yes`, `-1`) forces nothing. */
function forcedLevel(value: string | undefined): ColourLevel | undefined {
  if (value === undefined) return undefined;
  if (value === '' || value === 'true') return 1;
  if (value === 'false') return 0;
  const level = Number.parseInt(value, 10);
  if (!Number.isInteger(level) || level < 0) return undefined;
  return Math.min(level, 3) as ColourLevel;
}
