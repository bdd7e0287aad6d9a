/** `--json` (or `--query`, which implies it) among the options, the words before `--`: what a failure or a signal owes stdout, decided from argv as typed. */
export function jsonAsked(argv: readonly string[]): boolean {
  const end = argv.indexOf('--');
  return (end === -1 ? argv : argv.slice(0, end)).some((word) => word === '--json' || word === '--query' || word.startsWith('--query='));
}
