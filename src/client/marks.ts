/**
 * What svc draws at random for a create, so that its key can be told from
 * every other when the answer is lost (docs/contract.md §C4): a suffix to a
 * name svc chose, and the milliseconds of an expiry svc computed from a
 * duration. Nobody else sends them. A value is a mark only for the one
 * create it was drawn for, by this client (one per command, one per action
 * of the interactive manager): a name or a time typed by a person that
 * looks the same is none, since another job may type it too, and so is one
 * a later create copies (a rotation keeps the old key's expiry, as a
 * second job rotating the same key would).
 *
 * node:crypto, not the client's `random`: tests pin that to one value, and
 * two marks drawn from it would be the same.
 */
import { randomInt } from 'node:crypto';
import type { CreateKeyRequest } from '../contract/types.js';

const SUFFIX_ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';
/** 36⁶, about two billion: two jobs of one second share a name once in that many. */
const SUFFIX_LENGTH = 6;
/**
 * An expiry is pulled back by up to a hundredth of its lifetime, within
 * these: under half a minute, so that a key asked for an hour is still
 * shown as one that expires in an hour, never as in 59 minutes.
 */
const LEAST_PULLED_BACK_MS = 999;
const MOST_PULLED_BACK_MS = 29_999;

/** What of a create's request svc drew for it: the name, and the expiry (epoch ms), when it did. */
export interface Marks {
  name: boolean;
  expiresAtMs: number | null;
}

export class DrawnMarks {
  private readonly drawn = new Set<string>();

  /** `base` and a random suffix: default names made in the same second (`run deploy.sh 2026-…Z`) differ. */
  name(base: string): string {
    let suffix = '';
    for (let i = 0; i < SUFFIX_LENGTH; i++) suffix += SUFFIX_ALPHABET[randomInt(SUFFIX_ALPHABET.length)];
    const name = `${base} ${suffix}`;
    this.drawn.add(name);
    return name;
  }

  /**
   * `atMs` as an RFC 3339 time a little earlier, never later: by a random
   * number of milliseconds up to a hundredth of the lifetime from `fromMs`,
   * at least a second's worth and under half a minute's, so that two jobs
   * asking the same lifetime in the same millisecond draw the same time
   * about once in 30,000 (a lifetime of 50 minutes or more), not once in 1,000.
   * Never a whole second: a server that rounds the time to the second cannot
   * list it back as sent, and the key is then unmarked.
   */
  expiry(atMs: number, fromMs: number): string {
    const spanMs = Math.min(MOST_PULLED_BACK_MS, Math.max(LEAST_PULLED_BACK_MS, Math.floor((atMs - fromMs) / 100)));
    let drawnMs = atMs - 1 - randomInt(spanMs);
    if (drawnMs % 1000 === 0) drawnMs -= 1;
    const iso = new Date(drawnMs).toISOString();
    this.drawn.add(iso);
    return iso;
  }

  /** The marks of the create about to send `request`, taken: no later request carries them as marks. */
  take(request: CreateKeyRequest): Marks {
    const expiry = request.expiresAt;
    return {
      name: this.drawn.delete(request.name),
      expiresAtMs: typeof expiry === 'string' && this.drawn.delete(expiry) ? Date.parse(expiry) : null,
    };
  }
}
