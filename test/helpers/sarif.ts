/**
 * What a SARIF validator nobody here wrote says of a SARIF log (svc scan --format sarif):
 * the OASIS standard's own JSON schema for SARIF 2.1.0 (test/fixtures/sarif/, draft-04),
 * compiled by ajv-draft-04 with ajv-formats for its uri, uri-reference and date-time
 * formats. Offline: the schema is a file here, and nothing it names is fetched.
 *
 * Not Microsoft's `@microsoft/sarif-multitool validate` (its SARIF1xxx and GH1xxx rules):
 * 5.7.0's Linux build runs without .NET but, here, reported nothing for logs the schema
 * rejects (a result without a message, level "fatal", version "2.0"), and 4.6.5's aborts
 * on start. Nor `@microsoft/sarif-multitool-ts`, whose validation is of its AI profile.
 */
import { readFileSync } from 'node:fs';
import Ajv04Module, { type ErrorObject, type ValidateFunction } from 'ajv-draft-04';
import addFormatsModule from 'ajv-formats';

const SCHEMA = new URL('../fixtures/sarif/sarif-schema-2.1.0.json', import.meta.url);

// Both are CommonJS with a default export; their types and their runtime shape disagree under NodeNext.
type Ajv04Class = typeof Ajv04Module.default;
const Ajv04 = ((Ajv04Module as unknown as { default?: Ajv04Class }).default ?? Ajv04Module) as Ajv04Class;
const addFormats = ((addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ?? addFormatsModule) as unknown as (ajv: InstanceType<Ajv04Class>) => void;

let validator: ValidateFunction | undefined;

/** The schema's validator, compiled on first use (about half a second) and kept. */
function validate(): ValidateFunction {
  if (validator) return validator;
  const ajv = new Ajv04({ allErrors: true });
  addFormats(ajv);
  validator = ajv.compile(JSON.parse(readFileSync(SCHEMA, 'utf8')) as object);
  return validator;
}

/** One complaint: where in the log (a JSON pointer, `/` for the log itself) and what is wrong there. */
function complaint(error: ErrorObject): string {
  const allowed = error.keyword === 'enum' ? `: ${(error.params as { allowedValues: unknown[] }).allowedValues.map((value) => JSON.stringify(value)).join(', ')}` : '';
  return `${error.instancePath || '/'} ${error.message ?? error.keyword}${allowed}`;
}

/**
 * The SARIF 2.1.0 schema's complaints about `document` (a parsed log, not its text), each as
 * `<JSON pointer> <what is wrong>`; none when the log is valid SARIF 2.1.0. Async so that a
 * validator in another process could answer here too.
 */
export async function sarifProblems(document: unknown): Promise<string[]> {
  const check = validate();
  return check(document) ? [] : [...new Set((check.errors ?? []).map(complaint))];
}
