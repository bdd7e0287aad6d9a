import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A self-signed certificate made now with openssl, for localhost, 127.0.0.1
 * and svc.test (the host the forward proxy resolves): what a private
 * server's admin makes, and what no CA store trusts.
 */
export function selfSignedCertificate(): { cert: string; key: string; certFile: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'svc-cert-'));
  const certFile = join(dir, 'cert.pem');
  const keyFile = join(dir, 'key.pem');
  execFileSync('openssl', [
    'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '2',
    '-keyout', keyFile, '-out', certFile, '-subj', '/CN=svc.test',
    '-addext', 'subjectAltName=DNS:svc.test,DNS:localhost,IP:127.0.0.1',
  ], { stdio: 'ignore' });
  return {
    cert: readFileSync(certFile, 'utf8'),
    key: readFileSync(keyFile, 'utf8'),
    certFile,
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
