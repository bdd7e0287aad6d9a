const UNITS: [number, string][] = [
  [365 * 86_400, 'year'],
  [30 * 86_400, 'month'],
  [7 * 86_400, 'week'],
  [86_400, 'day'],
  [3_600, 'hour'],
  [60, 'minute'],
  [1, 'second'],
];

/** "3 minutes ago", "in 29 days", "just now"; `at` is an ISO time or epoch milliseconds. */
export function relativeTime(at: string | number, nowMs: number): string {
  const deltaSeconds = Math.round(((typeof at === 'number' ? at : Date.parse(at)) - nowMs) / 1000);
  const abs = Math.abs(deltaSeconds);
  if (abs < 5) return 'just now';
  let index = UNITS.findIndex(([s]) => abs >= s);
  // Rounded, so a 90-day key seen a minute later still reads "in 3 months";
  // a count that rounds up to the next unit ("60 minutes") is said in that unit.
  if (index > 0 && Math.round(abs / UNITS[index]![0]) * UNITS[index]![0] >= UNITS[index - 1]![0]) index--;
  const [size, unit] = UNITS[index]!;
  const n = Math.round(abs / size);
  const phrase = `${n} ${unit}${n === 1 ? '' : 's'}`;
  return deltaSeconds < 0 ? `${phrase} ago` : `in ${phrase}`;
}
