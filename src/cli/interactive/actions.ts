import { confirmDisable, confirmRevoke } from '../dialogs/key-changes.js';
import { askExpiry, askKeyName } from '../dialogs/new-key.js';
import { pickKey, pickKeys, type PickedKey } from '../dialogs/pick-key.js';
import { askKey, askServer, confirmReplacing, logInWith } from '../dialogs/login.js';
import { confirmFinish, finishRotation, rotate } from '../dialogs/rotate.js';
import { notLoggedIn, UsageError } from '../errors/errors.js';
import { createExpiringKey } from '../operations/create.js';
import { changeKeys, type ChangeRequest, type KeyChange } from '../operations/change-keys.js';
import { keysContext, profileContext } from '../operations/context.js';
import { profilesOf, type KeySession, type ProfileSession } from '../session/session.js';
import { useProfile } from '../operations/profile.js';
import { askMeantProfile } from '../dialogs/meant-profile.js';
import { keyLabel } from '../views/keys.js';
import { showPing } from '../views/ping.js';
import { createWatch } from '../views/show-new-key.js';
import { showOrRevokeNewKey } from '../delivery/hand-over.js';
import { keyChangeView } from '../views/key-changes.js';
import type { View } from './view.js';
import { readEnv } from '../terminal/environment.js';

/** What an action runs with: a session resolved for it alone (its own deadline), and the screen it was chosen from. */
export interface ActionContext {
  session: ProfileSession;
  /** The session with the key in use; null when there is none. */
  keySession: KeySession | null;
  view: View;
}

interface Action {
  /** As the menu shows it; a function when it depends on the state. */
  label: string | ((view: View) => string);
  needsKey: boolean;
  /** Prints a new key's secret, which stays on screen until Enter (docs/contract.md §C7). */
  showsSecret?: boolean;
  /** Offered only when this holds (default: always). */
  offered?: (view: View) => boolean;
  /** Returns the profile to go on with when the action switches it. */
  run(context: ActionContext): Promise<{ profile: string } | void>;
}

function withKeySession(context: ActionContext): KeySession {
  if (!context.keySession) throw new UsageError(`${notLoggedIn(context.session.profileName)}.`);
  return context.keySession;
}

type ActionKey = 'create' | 'toggle' | 'revoke' | 'rotate' | 'finish' | 'ping' | 'refresh' | 'profile' | 'login' | 'quit';

/** Every action is the operations the subcommands use, fed answers from prompts. */
export const ACTIONS = {
  create: {
    label: 'Create a key',
    needsKey: true,
    showsSecret: true,
    async run(context) {
      const session = withKeySession(context);
      const name = await askKeyName(session);
      const expiry = await askExpiry(session);
      await showOrRevokeNewKey(session, await createExpiringKey(session.client, name, expiry, createWatch(session)));
    },
  },
  toggle: {
    label: 'Enable or disable a key',
    needsKey: true,
    async run(context) {
      const session = withKeySession(context);
      const { view } = context;
      const key = await pickKey(session, view.keys, view.nowMs, view.inUse, 'Key to switch on or off:');
      const prompts = await session.prompts();
      // A server may send neither `enabled` nor a status: then the person says which.
      const enabled =
        key.enabled ??
        (await prompts.select(`Switch ${keyLabel(key)}:`, [
          { name: 'on (enable)', value: false },
          { name: 'off (disable)', value: true },
        ]));
      if (enabled) await confirmDisable(session, [key.id], view.keys, view.nowMs);
      await change(session, enabled ? 'disable' : 'enable', [key]);
    },
  },
  revoke: {
    label: 'Revoke a key',
    needsKey: true,
    async run(context) {
      const session = withKeySession(context);
      const { view } = context;
      // Several at once, marked with Tab, as `svc keys revoke` with no id picks them.
      const keys = await pickKeys(session, view.keys, view.nowMs, view.inUse, 'Keys to revoke:');
      await confirmRevoke(session, keys.map((key) => key.id), view.keys, view.nowMs);
      await change(session, 'revoke', keys);
    },
  },
  rotate: {
    label: 'Rotate a key (new secret, old key revoked)',
    needsKey: true,
    showsSecret: true,
    async run(context) {
      const session = withKeySession(context);
      const { view } = context;
      const key = await pickKey(session, view.keys, view.nowMs, view.inUse, 'Key to rotate:');
      // Rotating revokes: it asks first, as `keys rotate` does.
      await rotate(session, key.id, {});
    },
  },
  finish: {
    label: 'Finish the pending rotation (revoke the old key)',
    needsKey: true,
    offered: (view) => view.pending !== undefined,
    async run(context) {
      const session = withKeySession(context);
      await confirmFinish(session, context.view.pending!);
      await finishRotation(session, 'finish');
    },
  },
  ping: {
    label: 'Ping: check the key in use',
    needsKey: true,
    async run(context) {
      const session = withKeySession(context);
      showPing(session, await session.client.probeKeyList());
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
    async run({ session }) {
      const prompts = await session.prompts();
      const names = [...new Set([...session.config.profileNames(), 'default'])].sort();
      const other = '\u0000other';
      let name = await prompts.select('Profile:', [
        ...names.map((n) => ({ name: n === session.profileName ? `${n} (current)` : n, value: n })),
        { name: 'Another profile…', value: other },
      ]);
      if (name === other) {
        name = await askMeantProfile(session, (await prompts.text('Profile name:', (v) => (/^[\w.-]+$/.test(v.trim()) ? true : 'Letters, digits, ".", "_" and "-" only.'))).trim());
      }
      if (readEnv(session.io.env, 'SVC_API_KEY')) session.render.warn("SVC_API_KEY is set: it overrides every profile's saved key.");
      // The switch lasts for this session; making it the default (`svc profile use`) keeps it for every command after.
      const isDefault = (session.config.defaultProfile() ?? 'default') === name;
      if (!isDefault && profilesOf(session.config).includes(name)) {
        if (await prompts.confirm(`Make '${name}' the default profile, for every svc command from now on?`, false)) {
          const { configPath } = await useProfile(profileContext(session), name);
          session.render.success(`Profile '${name}' is now the default (saved in ${configPath}).`);
        }
      }
      return { profile: name };
    },
  },
  login: {
    label: (view) => (view.credentials ? 'Log in with another key' : 'Log in'),
    needsKey: false,
    async run({ session }) {
      const to = await askServer(session);
      // The same question `svc login` asks before it replaces the profile's key: the menu's word "another" does not name it.
      await confirmReplacing(to, false);
      await logInWith(to, await askKey(to));
    },
  },
  quit: {
    label: 'Quit',
    needsKey: false,
    async run() {},
  },
} satisfies Record<string, Action> as Record<ActionKey, Action>;

export type ActionName = ActionKey;

/** An action's name in the menu, as the manager also quotes it in hints. */
export function labelOf(name: ActionName, view: View): string {
  const { label } = ACTIONS[name];
  return typeof label === 'function' ? label(view) : label;
}

/** The keys the person picked from the list, changed through the engine every command uses, and told by its view. */
async function change(session: KeySession, what: KeyChange, keys: readonly PickedKey[]): Promise<void> {
  const request: ChangeRequest = { change: what, targets: { keys } };
  const view = keyChangeView(session, request, { command: what });
  view.report(await changeKeys(keysContext(session), request, view.events));
}
