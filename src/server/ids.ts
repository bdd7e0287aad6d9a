/** The prefix of each kind of id the server makes; the rest is ID_LENGTH symbols of ID_ALPHABET. */
export const ID_PREFIX = { user: 'usr_', workspace: 'ws_', key: 'key_' } as const;
export type IdKind = keyof typeof ID_PREFIX;

export const ID_ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyz';
/** 20 base36 symbols are about 103 bits: a random id is never drawn twice in practice, and live ids are checked anyway. */
export const ID_LENGTH = 20;

const ID_PATTERN = Object.fromEntries(
  Object.entries(ID_PREFIX).map(([kind, prefix]) => [kind, new RegExp(`^${prefix}[${ID_ALPHABET}]{${ID_LENGTH}}$`)]),
) as Record<IdKind, RegExp>;

/** Whether `value` is an id the server could have made for a record of this kind. */
export function isId(kind: IdKind, value: unknown): value is string {
  return typeof value === 'string' && ID_PATTERN[kind].test(value);
}
