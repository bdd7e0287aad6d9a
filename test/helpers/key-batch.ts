import { call, svc, type useLocalServer } from './in-process.js';

type Local = ReturnType<typeof useLocalServer>;

/** For tests of a change to several keys: keys made straight through the API, and what the server holds after. */
export function keyBatch(local: Local) {
  return {
    async makeKeys(name: string, count: number): Promise<string[]> {
      const ids: string[] = [];
      for (let i = 0; i < count; i++) ids.push((await call(local.server.url, 'POST', '/api/service/user/api-keys', local.server.apiKey!, { name })).json.id);
      return ids;
    },
    /** The keys named `name` on the server now, and whether each is enabled. */
    async onServer(name: string): Promise<Map<string, boolean>> {
      const { keys } = JSON.parse((await svc(['keys', 'list', '--json'], local.env)).stdout) as { keys: { id: string; name: string; enabled: boolean }[] };
      return new Map(keys.filter((k) => k.name === name).map((k) => [k.id, k.enabled]));
    },
  };
}

/** The ids a run told as `verb` ("Revoked", "Disabled"), in the order told. */
export const told = (stderr: string, verb: string) => [...stderr.matchAll(new RegExp(`✓ ${verb} (?:'[^']*' \\()?(key_\\w+)`, 'g'))].map((m) => m[1]!);
