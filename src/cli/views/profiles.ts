/** How profiles look: the table of `svc profile list`, and its --json document. */
import type { ProfileEntry, ProfileListing } from '../operations/profile.js';
import type { Column } from '../render/renderer.js';
import { tone } from '../render/text.js';
import type { ProfileSource } from '../session.js';
import { shown } from './keys.js';

export function profileColumns(): Column<ProfileEntry>[] {
  return [
    {
      header: 'PROFILE',
      human: (p) => (p.isActive ? tone(`* ${shown(p.name)}`, 'bold') : `  ${shown(p.name)}`),
      plain: (p) => p.name,
      maxWidth: 32,
    },
    { header: 'DEFAULT', human: (p) => (p.isDefault ? 'yes' : ''), plain: (p) => (p.isDefault ? 'yes' : 'no'), dropRank: 3 },
    {
      header: 'KEY',
      human: (p) => (p.hint === null ? tone('no key', 'dim') : p.store === 'keyring' ? `${p.hint} (keyring)` : p.hint),
      plain: (p) => p.hint ?? '',
      dropRank: 2,
    },
    {
      header: 'SERVER',
      human: (p) => (p.baseUrl === null ? tone(`${p.server} (local default)`, 'dim') : shown(p.server)),
      plain: (p) => p.server,
      dropRank: 1,
    },
  ];
}

/** Where the active profile's name came from, as the table's note says it. */
export const ACTIVE_FROM: Record<ProfileSource, string> = {
  flag: '--profile',
  env: 'SVC_PROFILE',
  config: 'the default profile',
  default: 'the default profile',
};

export function profilesDocument(listing: ProfileListing, activeFrom: ProfileSource) {
  return {
    config: listing.configPath,
    default: listing.defaultName,
    active: listing.profiles.find((p) => p.isActive)?.name ?? null,
    activeFrom,
    profiles: listing.profiles.map((p) => ({
      name: p.name,
      default: p.isDefault,
      active: p.isActive,
      key: p.hint === null ? null : { hint: p.hint, store: p.store },
      baseUrl: p.baseUrl,
      rotationPending: p.rotationPending,
    })),
  };
}
