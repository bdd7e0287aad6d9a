import { keyStatus, type KeyView } from '../../client/key-view.js';
import type { Context } from '../context.js';
import { parseDuration } from '../duration.js';
import { readEnv } from '../environment.js';
import { UsageError } from '../errors.js';
import { relativeTime, visible } from '../output.js';
import { isKeyInUse, setEnabled } from '../keys.js';
import { run as create } from '../commands/keys/create.js';
import { run as revoke } from '../commands/keys/revoke.js';
import { run as ping } from '../commands/keys/ping.js';
import { rotate, run as rotateCommand } from '../commands/keys/rotate.js';
import { run as login } from '../commands/login.js';
import type { View } from './view.js';

interface Action {
  /** As the menu shows it; a function when it depends on the state. */
  label: string | ((view: View) => string);
  needsKey: boolean;
  /** Prints a new key's secret, which stays on screen until Enter (docs/contract.md §C7). */
  showsSecret?: boolean;
  /** Offered only when this holds (default: always). */
  offered?: (view: View) => boolean;
  /** Returns a new context when the action changes who the session is. */
  run(ctx: Context, view: View): Promise<Context | void>;
}

/** Every action is the subcommand's own code, fed answers from prompts. */
export const ACTIONS = {
  create: {
    label: 'Create a key',
    needsKey: true,
    showsSecret: true,
    async run(ctx) {
      const prompts = await ctx.prompts();
      const name = await prompts.text('Name for the new key:', (v) => (v.trim() ? true : 'A name is required.'));
      const expiresIn = await prompts.text('Expires in (30d, 12h, 2w; empty for never):', (v) => {
        if (!v.trim()) return true;
        try {
          parseDuration(v);
          return true;
        } catch (error) {
          return (error as Error).message;
        }
      });
      await create(ctx, name.trim(), expiresIn.trim() ? { expiresIn: expiresIn.trim() } : {});
    },
  },
  toggle: {
    label: 'Enable or disable a key',
    needsKey: true,
    async run(ctx, view) {
      const key = await pickKey(ctx, view, 'Key to switch on or off:');
      const prompts = await ctx.prompts();
      // A server may send neither `enabled` nor a status: then the person says which.
      const enabled =
        key.enabled ??
        (await prompts.select(`Switch ${label(key)}:`, [
          { name: 'on (enable)', value: false },
          { name: 'off (disable)', value: true },
        ]));
      if (enabled) {
        if (isKeyInUse(key, view.inUse)) warnLockOut(ctx, view, 'Disabling');
        if (!(await prompts.confirm(`Disable ${label(key)}?`))) return;
      }
      await setEnabled(ctx, key.id, !enabled);
    },
  },
  revoke: {
    label: 'Revoke a key',
    needsKey: true,
    async run(ctx, view) {
      const key = await pickKey(ctx, view, 'Key to revoke:');
      const prompts = await ctx.prompts();
      if (isKeyInUse(key, view.inUse)) warnLockOut(ctx, view, 'Revoking');
      if (!(await prompts.confirm(`Revoke ${label(key)}? This cannot be undone.`))) return;
      await revoke(ctx, [key.id], { yes: true, known: view.keys });
    },
  },
  rotate: {
    label: 'Rotate a key (new secret, old key revoked)',
    needsKey: true,
    showsSecret: true,
    async run(ctx, view) {
      const key = await pickKey(ctx, view, 'Key to rotate:');
      const prompts = await ctx.prompts();
      // Rotating revokes: it asks first, as revoking does.
      if (!(await prompts.confirm(`Rotate ${label(key)}? A new key replaces it and the old one is revoked; this cannot be undone.`))) {
        return;
      }
      await rotate(ctx, key.id, {});
      // A rotated key in use may have been saved to the profile: start afresh.
      return ctx.withProfile(ctx.profileName);
    },
  },
  finish: {
    label: 'Finish the pending rotation (revoke the old key)',
    needsKey: true,
    offered: (view) => view.pending !== undefined,
    async run(ctx, view) {
      const prompts = await ctx.prompts();
      if (!(await prompts.confirm(`Revoke the old key ${visible(view.pending!.oldId)}? Everything should use ${visible(view.pending!.newId)} by now.`))) return;
      await rotateCommand(ctx, undefined, { finish: true });
    },
  },
  ping: {
    label: 'Ping: check the key in use',
    needsKey: true,
    async run(ctx) {
      await ping(ctx);
    },
  },
  refresh: {
    label: (view) => (view.failure ? 'Try again' : 'Refresh'),
    needsKey: false,
    async run() {},
  },
  profile: {
    label: 'Switch profile',
    needsKey: false,
    async run(ctx) {
      const prompts = await ctx.prompts();
      const names = [...new Set([...(await ctx.config()).profileNames(), 'default'])].sort();
      const other = '\u0000other';
      let name = await prompts.select(
        'Profile:',
        [...names.map((n) => ({ name: n === ctx.profileName ? `${n} (current)` : n, value: n })), { name: 'Another profile…', value: other }],
      );
      if (name === other) {
        name = (await prompts.text('Profile name:', (v) => (/^[\w.-]+$/.test(v.trim()) ? true : 'Letters, digits, ".", "_" and "-" only.'))).trim();
      }
      if (readEnv(ctx.io.env, 'SVC_API_KEY')) ctx.msg.warn('SVC_API_KEY is set: it overrides every profile\'s saved key.');
      return ctx.withProfile(name);
    },
  },
  login: {
    label: (view) => (view.credentials ? 'Log in with another key' : 'Log in'),
    needsKey: false,
    async run(ctx) {
      await login(ctx, {});
      return ctx.withProfile(ctx.profileName);
    },
  },
  quit: {
    label: 'Quit',
    needsKey: false,
    async run() {},
  },
} satisfies Record<string, Action>;

export type ActionName = keyof typeof ACTIONS;

/** An action's name in the menu, as the session also quotes it in hints. */
export function labelOf(name: ActionName, view: View): string {
  const { label } = ACTIONS[name] as Action;
  return typeof label === 'function' ? label(view) : label;
}

type PickedKey = KeyView & { id: string };

/** Names in a pick-list are cut here, so that one long name does not push every row's columns off the screen. */
const PICK_NAME_WIDTH = 28;

/** A list filtered as you type, in aligned columns: name, hint, status, last use. */
async function pickKey(ctx: Context, view: View, message: string): Promise<PickedKey> {
  const keys = view.keys.filter((k): k is PickedKey => k.id !== null);
  if (keys.length === 0) throw new UsageError('There are no keys.');
  const prompts = await ctx.prompts();
  const rows = keys.map((k) => [
    k.name === null ? '-' : cut(visible(k.name), PICK_NAME_WIDTH),
    k.hint === null ? '-' : visible(k.hint),
    visible(keyStatus(k, view.nowMs) ?? '-'),
    !k.lastUsedKnown ? '' : k.lastUsedAt === null ? 'never used' : `used ${relativeTime(k.lastUsedAt, view.nowMs)}`,
  ]);
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => [...row[column]!].length)));
  return prompts.search(
    message,
    keys.map((k, i) => {
      const cells = rows[i]!.map((cell, column) => cell + ' '.repeat(widths[column]! - [...cell].length));
      return {
        name: `${cells.join('  ').trimEnd()}${isKeyInUse(k, view.inUse) ? '  ← in use' : ''}`,
        value: k,
        description: visible(k.id),
      };
    }),
  );
}

function cut(text: string, width: number): string {
  const chars = [...text];
  return chars.length > width ? `${chars.slice(0, width - 1).join('')}…` : text;
}

/** A key as a confirmation names it: 'name' (id). */
function label(key: PickedKey): string {
  return key.name === null ? visible(key.id) : `'${visible(key.name)}' (${visible(key.id)})`;
}

/** Said before the question, so that the person knows what the yes means before giving it. */
function warnLockOut(ctx: Context, view: View, doing: string): void {
  ctx.msg.warn(
    `This is the key this session uses (${view.inUse}): ${doing.toLowerCase()} it locks the session out until you switch profile or log in with another key.`,
  );
}
