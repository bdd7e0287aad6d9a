/** How profiles look: the table of `svc profile list`, and its --json document. */
import type { ProfileEntry, ProfileListing } from '../operations/profile.js';
import type { Column } from '../terminal/renderer.js';
import { tone } from '../text/text.js';
import { PROJECT_FILE } from '../session/project-profile.js';
import type { ProfileSource } from '../session/session.js';
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

/** Why the active profile applies, as `profile list` and `status` say it: '--profile', '/repo/.svc-profile', 'the default profile'. */
export function activeFrom(source: ProfileSource, file: string | null): string {
  if (source === 'project') return file ?? PROJECT_FILE;
  return { flag: '--profile', env: 'SVC_PROFILE', config: 'the default profile', default: 'the default profile' }[source];
}

export function profilesDocument(listing: ProfileListing, activeFrom: ProfileSource, activeFile: string | null) {
  return {
    config: listing.configPath,
    default: listing.defaultName,
    active: listing.profiles.find((p) => p.isActive)?.name ?? null,
    activeFrom,
    activeFile,
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
