/**
 * --to-command: the user's own command, run by their shell (`/bin/sh -c`;
 * `cmd.exe /d /s /c` on Windows), gets the secret on its stdin, exactly
 * its characters with no newline, then end of input; never in its
 * arguments or environment. Its exit status decides. What it prints goes to
 * svc's stderr as it comes, unescaped: it is the user's program talking to
 * the user, as it would from their shell, and svc's stdout stays data. No
 * deadline: a command may rightly take its time (a login, a slow secret
 * store); Ctrl-C or SIGTERM stops it (a second one kills it).
 */
import { spawn } from 'node:child_process';
import type { Deps } from '../deps.js';
import { clip } from '../render/text.js';
import { DeliveryStepError } from './failure.js';

export interface CommandContext {
  /** svc's environment: the command gets it, less SVC_API_KEY. */
  env: NodeJS.ProcessEnv;
  /** Where the command's stdout and stderr go: svc's stderr. */
  output: NodeJS.WritableStream;
  onSignal: Deps['onSignal'];
}

export function deliverToCommand(command: string, secret: string, ctx: CommandContext): Promise<void> {
  const shown = `\`${clip(command, 200)}\``;
  return new Promise<void>((resolve, reject) => {
    const child = spawn(command, [], { shell: true, env: childEnv(ctx.env), stdio: ['pipe', 'pipe', 'pipe'], windowsHide: true });
    let signals = 0;
    let settled = false;
    const settle = (error: DeliveryStepError | null) => {
      if (settled) return;
      settled = true;
      off();
      if (error === null) resolve();
      else reject(error);
    };
    const off = ctx.onSignal(['SIGINT', 'SIGTERM'], () => {
      child.kill(++signals === 1 ? 'SIGTERM' : 'SIGKILL');
    });
    child.stdout.pipe(ctx.output, { end: false });
    child.stderr.pipe(ctx.output, { end: false });
    // A command that exits without reading its input closes the pipe: its exit status still decides.
    child.stdin.on('error', () => {});
    child.stdin.end(secret);
    child.on('error', (error) => settle(new DeliveryStepError(`${shown} could not be started: ${error.message}`)));
    child.on('exit', () => {
      // Stopped: what the shell started may live on and hold its output open; svc stops listening rather than wait for it.
      if (signals === 0) return;
      child.stdout.destroy();
      child.stderr.destroy();
      settle(new DeliveryStepError(`${shown} was stopped (interrupted)`, true));
    });
    // Otherwise the command is done once its output has all arrived.
    child.on('close', (code, signal) => {
      if (signals > 0) settle(new DeliveryStepError(`${shown} was stopped (interrupted)`, true));
      else if (code === 0) settle(null);
      else if (code !== null) settle(new DeliveryStepError(`${shown} exited with status ${code}`));
      else settle(new DeliveryStepError(`${shown} was killed by ${signal}`));
    });
  });
}

/**
 * svc's environment without SVC_API_KEY: the key svc itself uses (during a
 * rotation, often the one being replaced) is not the command's to read; the
 * new one reaches it on stdin. Windows spells names in any case.
 */
function childEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(env).filter(([name, value]) => value !== undefined && name.toUpperCase() !== 'SVC_API_KEY'));
}
