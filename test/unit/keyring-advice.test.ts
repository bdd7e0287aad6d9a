// tier: in-process
/**
 * The advice when the keyring's binding is missing names a command that
 * works where this svc is installed, and never a registry package named
 * like svc (svc is in no registry: someone else could publish one by its
 * name). Each printed command was run once in a temp prefix, project and
 * npx; this table keeps each layout on its own command.
 */
import { describe, expect, it } from 'vitest';
import { keyringInstallAdvice } from '../../src/cli/secret-store/keyring.js';

const at = (...paths: string[]) => (path: string) => paths.includes(path);

describe('keyringInstallAdvice', () => {
  it.each([
    ['global, Unix', '/usr/local/lib/node_modules/svc-cli', at('/usr/local/bin/svc'), '`npm install -g --prefix /usr/local @napi-rs/keyring@2`'],
    ['global, Windows', 'C:\\npm/node_modules/svc-cli', at('C:\\npm/svc.cmd'), "`npm install -g --prefix 'C:\\npm' @napi-rs/keyring@2`"],
    ['a project', '/home/me/app/node_modules/svc-cli', at(), '`npm install --prefix /home/me/app @napi-rs/keyring@2`'],
    ['a lib/ project without bin/svc', '/srv/lib/node_modules/svc-cli', at(), '`npm install --prefix /srv/lib @napi-rs/keyring@2`'],
    ['npx', '/home/me/.npm/_npx/0a1b/node_modules/svc-cli', at(), '`npx -p ./svc-cli-'],
    ['a clone', '/src/svc', at('/src/svc/package-lock.json'), '`npm ci --prefix /src/svc`'],
    ['an unpacked package', '/opt/svc', at(), '`npm install --prefix /opt/svc --no-save @napi-rs/keyring@2`'],
  ])('%s', (_layout, dir, exists, command) => {
    const advice = keyringInstallAdvice(dir, exists);
    expect(advice).toContain(command);
    // The package's own name appears only as the tarball's file name.
    expect(advice.replace(/\.\/svc-cli-[\w.-]+\.tgz/g, '')).not.toContain('svc-cli@');
    expect(advice).not.toMatch(/(?:install|-p) (?:-g )?svc-cli\b/);
  });
});
