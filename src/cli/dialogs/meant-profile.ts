import { meantProfiles } from '../domain/suggest.js';
import { otherProfiles, profilesOf, type ProfileSession } from '../session/session.js';
import { clip } from '../text/text.js';

/**
 * The manager's Switch profile to a name typed that names no profile: when
 * it is near one that exists (a typo), "No profile 'prdo'; did you mean
 * 'prod'?", the same nearest names a command's `--profile prdo` is told
 * (domain/suggest.ts). Yes switches to that one; No keeps the name typed,
 * a new profile to log in to. A name near several gets them as choices.
 */
export async function askMeantProfile(session: ProfileSession, name: string): Promise<string> {
  const near = meantProfiles(name, profilesOf(session.config));
  if (near.length === 0) return name;
  const prompts = await session.prompts();
  const typed = `No profile '${clip(name, 200)}'`;
  if (near.length === 1) return (await prompts.confirm(`${typed}; did you mean '${clip(near[0]!, 200)}'?`, true)) ? near[0]! : name;
  return prompts.select(`${typed}; did you mean one of these?`, [
    ...near.map((profile) => ({ name: profile, value: profile })),
    { name: `No: a new profile '${clip(name, 200)}'`, value: name },
  ]);
}

/**
 * `svc login --profile prdo` creates the profile it names, so a typo would
 * make a new one beside `prod`: when the name is near one that exists, it
 * is said before the key is asked for (Ctrl-C then stops it), with the
 * nearest names a command's --profile is told.
 */
export function noteNewProfile(session: ProfileSession): void {
  if (session.profileExists || meantProfiles(session.profileName, profilesOf(session.config)).length === 0) return;
  session.render.warn(`Profile '${clip(session.profileName, 200)}' does not exist; this login creates it. ${otherProfiles(session).replace(/^t/, 'T')}`);
}
