/**
 * `svc help environment`: every variable svc reads, with what it does,
 * from src/cli/terminal/environment.ts, the one list the man page's ENVIRONMENT
 * section and the README's table are made from. Loaded only for this topic.
 */
import { ENVIRONMENT } from '../terminal/environment.js';

export function environmentHelp(): string {
  const entries = ENVIRONMENT.map(({ names, description }) => `  ${names.join(', ')}\n      ${description}`);
  return `Environment variables svc reads (\`man svc\` has them too, under ENVIRONMENT):\n\n${entries.join('\n\n')}\n`;
}
