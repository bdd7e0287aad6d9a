// tier: in-process
import { describe, expect, it } from 'vitest';
import { sarifProblems } from '../helpers/sarif.js';

// The validator svc scan --format sarif's tests check its output with (test/helpers/sarif.ts):
// it passes a log that is SARIF 2.1.0 and names what is wrong with one that is not.

/** A SARIF 2.1.0 log as svc scan would write one: one run of svc, one rule, one result at a line. */
function validLog() {
  return {
    $schema: 'https://json.schemastore.org/sarif-2.1.0.json',
    version: '2.1.0',
    runs: [
      {
        tool: {
          driver: {
            name: 'svc',
            version: '0.1.0',
            rules: [
              {
                id: 'SVC001',
                name: 'KeyInSource',
                shortDescription: { text: 'An API key is in a source file' },
                fullDescription: { text: 'A media-generation API key is committed to the repository.' },
                help: { text: 'Revoke the key with svc keys revoke and read it from the environment instead.' },
                helpUri: 'https://svc.invalid/rules/SVC001',
                defaultConfiguration: { level: 'error' },
                properties: { tags: ['security'], precision: 'high', 'security-severity': '8.0' },
              },
            ],
          },
        },
        results: [
          {
            ruleId: 'SVC001',
            ruleIndex: 0,
            level: 'error',
            message: { text: 'A key is in src/config.ts.' },
            locations: [{ physicalLocation: { artifactLocation: { uri: 'src/config.ts' }, region: { startLine: 3, startColumn: 15, endColumn: 69 } } }],
            partialFingerprints: { primaryLocationLineHash: '39fa2ee980eb94b0:1' },
            properties: { keyHint: 'sk_…3x' },
          },
        ],
      },
    ],
  };
}

type Log = ReturnType<typeof validLog>;
const resultOf = (log: Log) => log.runs[0]!.results[0]! as Record<string, unknown>;

describe('sarifProblems', () => {
  it('finds nothing wrong with a valid SARIF 2.1.0 log', async () => {
    expect(await sarifProblems(validLog())).toEqual([]);
  });

  it('names each thing wrong with a log that is not SARIF 2.1.0', async () => {
    const log = validLog() as Log & { version: string };
    log.version = '2.0';
    delete resultOf(log).message;
    resultOf(log).level = 'fatal';
    const problems = await sarifProblems(log);
    expect(problems).toEqual(
      expect.arrayContaining([
        '/version must be equal to one of the allowed values: "2.1.0"',
        "/runs/0/results/0 must have required property 'message'",
        '/runs/0/results/0/level must be equal to one of the allowed values: "none", "note", "warning", "error"',
      ]),
    );
    expect(problems).toHaveLength(3);
  });

  it.each([
    ['a region before the first line', (log: Log) => void (log.runs[0]!.results[0]!.locations[0]!.physicalLocation.region.startLine = 0), '/runs/0/results/0/locations/0/physicalLocation/region/startLine must be >= 1'],
    ['a location that is no URI reference', (log: Log) => void (log.runs[0]!.results[0]!.locations[0]!.physicalLocation.artifactLocation.uri = 'C:\\src\\config.ts'), '/runs/0/results/0/locations/0/physicalLocation/artifactLocation/uri must match format "uri-reference"'],
    ['a fingerprint that is not a string', (log: Log) => void ((log.runs[0]!.results[0]!.partialFingerprints as Record<string, unknown>).primaryLocationLineHash = 1), '/runs/0/results/0/partialFingerprints/primaryLocationLineHash must be string'],
    ['a property SARIF does not have', (log: Log) => void (resultOf(log).severity = 'high'), '/runs/0/results/0 must NOT have additional properties'],
    ['a run without its tool', (log: Log) => void delete (log.runs[0] as Record<string, unknown>).tool, "/runs/0 must have required property 'tool'"],
  ])('names %s', async (_what, breakIt, problem) => {
    const log = validLog();
    breakIt(log);
    expect(await sarifProblems(log)).toEqual([problem]);
  });

  it('says a log that is not even an object is not one', async () => {
    expect(await sarifProblems('{"version":"2.1.0"}')).toEqual(['/ must be object']);
  });
});
