/**
 * `svc scan --format sarif`: a SARIF 2.1.0 log for code-scanning
 * dashboards (GitHub's upload-sarif among them). One rule; one result per
 * place, its level `error` for a key that is live and `warning` for the
 * rest; the key's fingerprint as the result's partial fingerprint, so that
 * a dashboard tracks one leak across runs; the state in its properties.
 * No secret: the message names the key by its hint.
 */
import type { Place } from '../sources/places.js';
import { revocation, stateWord, stillLive, whose, type ReportedKey, type ScanReport } from './scan.js';

const RULE_ID = 'svc/leaked-api-key';

/** A path as a relative URI reference: each segment percent-encoded, so that no name can pass for a scheme, a query or another directory. */
function uriOf(path: string): string {
  return path
    .split('/')
    .map((segment) => encodeURIComponent(segment))
    .join('/');
}

function location(place: Place, length: number) {
  const region = { startLine: place.line, startColumn: place.column, endLine: place.line, endColumn: place.column + length };
  if (place.source === 'stdin') return { physicalLocation: { artifactLocation: { uri: 'stdin' }, region } };
  return { physicalLocation: { artifactLocation: { uri: uriOf(place.path), uriBaseId: '%SRCROOT%' }, region } };
}

function result(key: ReportedKey, place: ReportedKey['places'][number]) {
  const live = stillLive(key);
  const record = key.verdict.state !== 'not-checked' ? key.verdict.owner?.record : undefined;
  return {
    ruleId: RULE_ID,
    ruleIndex: 0,
    level: live ? 'error' : 'warning',
    message: { text: `API key ${key.hint} (${stateWord(key)}: ${whose(key)}) is in the text${place.escaped ? ', escaped' : ''}.` },
    locations: [location(place.place, place.length)],
    partialFingerprints: { 'svcKeyFingerprint/v1': key.fingerprint },
    properties: {
      state: key.verdict.state,
      hint: key.hint,
      ...(record?.id ? { keyId: record.id } : {}),
      ...(record?.workspaceId ? { workspaceId: record.workspaceId } : {}),
      ...(place.place.source === 'git' ? { commit: place.place.commit, blob: place.place.blob } : {}),
      revoked: revocation(key),
    },
  };
}

export function sarifLog(report: ScanReport, version: string) {
  return {
    $schema: 'https://json.schemastore.org/sarif-2.1.0.json',
    version: '2.1.0',
    runs: [
      {
        tool: {
          driver: {
            name: 'svc',
            version,
            rules: [
              {
                id: RULE_ID,
                name: 'LeakedApiKey',
                shortDescription: { text: 'An API key of the service is in the text' },
                fullDescription: { text: 'A string of the service key format (sk_ followed by 64 letters and digits) is in a file, a commit or a log. Anyone who reads it can use the key until it is revoked.' },
                help: {
                  text: 'Revoke the key (svc scan --revoke, or svc keys revoke ID) and give whatever used it a new one (svc keys rotate ID before revoking, or svc keys create NAME). Removing the text does not end the key: its history and copies keep it.',
                },
                defaultConfiguration: { level: 'error' },
                properties: { tags: ['security', 'secret'], precision: 'very-high', 'security-severity': '9.0' },
              },
            ],
          },
        },
        columnKind: 'utf16CodeUnits',
        results: report.keys.flatMap((key) => key.places.map((place) => result(key, place))),
      },
    ],
  };
}
