import type { KeyView } from '../../client/key-view.js';
import type { Context } from '../context.js';
import { parseDuration } from '../duration.js';
import { UsageError } from '../errors.js';
import { visible } from '../output.js';
import { isKeyInUse, keyChoiceLine, keyLabel as label, setEnabled } from '../keys.js';
import { run as create } from '../commands/keys/create.js';
import { run as revoke } from '../commands/keys/revoke.js';
import { run as ping } from '../commands/keys/ping.js';
import { rotate, run as rotateCommand } from '../commands/keys/rotate.js';
import { run as login } from '../commands/login.js';
import type { View } from './view.js';

interface Action {
  label: string;
  needsKey: boolean;
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
      if (enabled && isKeyInUse(key, view.inUse)) {
        if (!(await prompts.confirm(`Disable ${label(key)}?`))) return;
        if (!(await confirmLockOut(ctx, view, 'Disabling'))) return;
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
      if (!(await prompts.confirm(`Revoke ${label(key)}? This cannot be undone.`))) return;
      if (isKeyInUse(key, view.inUse) && !(await confirmLockOut(ctx, view, 'Revoking'))) return;
      await revoke(ctx, [key.id], { yes: true });
    },
  },
  rotate: {
    label: 'Rotate a key (new secret, old key revoked)',
    needsKey: true,
    async run(ctx, view) {
      const key = await pickKey(ctx, view, 'Key to rotate:');
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
    label: 'Refresh',
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
      if (ctx.io.env.SVC_API_KEY) ctx.msg.warn('SVC_API_KEY is set: it overrides every profile\'s saved key.');
      return ctx.withProfile(name);
    },
  },
  login: {
    label: 'Log in with another key',
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

type PickedKey = KeyView & { id: string };

/** A list filtered as you type: name, hint, status and last use. */
async function pickKey(ctx: Context, view: View, message: string): Promise<PickedKey> {
  const keys = view.keys.filter((k): k is PickedKey => k.id !== null);
  if (keys.length === 0) throw new UsageError('There are no keys.');
  const prompts = await ctx.prompts();
  return prompts.search(
    message,
    keys.map((k) => ({ name: keyChoiceLine(k, view.inUse, view.nowMs), value: k, description: visible(k.id) })),
  );
}

/** The second, explicit confirmation before the session cuts off its own key. */
async function confirmLockOut(ctx: Context, view: View, doing: string): Promise<boolean> {
  const prompts = await ctx.prompts();
  return prompts.confirm(
    `${doing} the key this session uses (${view.inUse}) locks the session out. Go ahead?`,
  );
}
