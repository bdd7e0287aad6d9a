import { randomBytes } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import type { ErrorCode } from '../contract/errors.js';
import { API_PREFIX } from '../contract/paths.js';
import { TextBody, type Headers, type Reply } from './http.js';
import { has, invalid, onlyFields } from './validation.js';

/** What a fault does once its delay is over (docs/contract.md §B, fault rules). */
export type FaultAction = 'answer' | 'status' | 'reset' | 'hang';
export type FaultBody = 'json' | 'html' | 'empty';

/** A rule as `POST /_local/faults` takes it, every default filled in, and as `GET /_local/faults` shows it. */
export interface FaultRule {
  id: string;
  method: string | null;
  path: string | null;
  times: number;
  /** Times left before the rule is used up; null for a rule that applies until removed. */
  remaining: number | null;
  delayMs: number;
  then: FaultAction;
  after: boolean;
  /** The real handler runs this long after the fault's answer (on the server's clock), its answer dropped; null: it does not run. */
  landsAfterMs: number | null;
  status?: number;
  body?: FaultBody;
  code?: string | null;
  retryAfter?: string | null;
}

/** What the fault layer decided for one request. */
export interface FaultPlan {
  /** The rule id, or the flag (`--fail-rate`) that caused the fault; null when nothing but latency applies. */
  fault: string | null;
  delayMs: number;
  then: FaultAction;
  after: boolean;
  landsAfterMs: number | null;
  /** The answer that replaces the real one, for `then: "status"`. */
  reply?: Reply;
}

/** Standing faults of the server process, from `svc serve --local --latency/--fail-rate`. */
export interface AmbientFaults {
  /** Every API request waits this long (a random span between the two, ms) before it is handled. */
  latency?: { minMs: number; maxMs: number };
  /** Share (0..1) of API requests answered 502 or 503 instead of being handled. */
  failRate?: number;
}

const ACTIONS: readonly FaultAction[] = ['answer', 'status', 'reset', 'hang'];
const BODIES: readonly FaultBody[] = ['json', 'html', 'empty'];
const RULE_FIELDS = ['method', 'path', 'times', 'delayMs', 'then', 'after', 'landsAfterMs', 'status', 'body', 'code', 'retryAfter'];
const STATUS_FIELDS = ['status', 'body', 'code', 'retryAfter'] as const;
/** A day: longer than any client waits, short enough to be a mistake worth refusing when larger. */
const MAX_DELAY_MS = 86_400_000;
const MAX_RULES = 1_000;
const METHOD = /^[A-Za-z]{1,20}$/;

/** The error code a JSON fault body carries when the rule names none. */
function defaultCode(status: number): string {
  return DEFAULT_CODES[status] ?? (status >= 500 ? 'UNAVAILABLE' : 'INVALID_REQUEST');
}

/** The statuses docs/contract.md §A6 gives a code of their own. */
const DEFAULT_CODES: Record<number, ErrorCode> = {
  401: 'UNAUTHORIZED',
  404: 'NOT_FOUND',
  405: 'METHOD_NOT_ALLOWED',
  413: 'PAYLOAD_TOO_LARGE',
  429: 'RATE_LIMITED',
  500: 'INTERNAL',
};

/**
 * Faults for coming requests under /api/service: rules added through
 * /_local/faults, matched in the order they were added, each used a fixed
 * number of times or until removed; and the standing faults of the process.
 */
export class FaultTable {
  private rules: FaultRule[] = [];

  constructor(
    private readonly ambient: AmbientFaults = {},
    private readonly random: () => number = Math.random,
  ) {}

  /** Validates every rule before adding any: a body with one bad rule adds none. */
  add(input: Record<string, unknown>): FaultRule[] {
    onlyFields(input, ['rules']);
    const list = input.rules;
    if (!Array.isArray(list) || list.length === 0) throw invalid('"rules" must be a non-empty array of fault rules');
    if (this.rules.length + list.length > MAX_RULES) throw invalid(`at most ${MAX_RULES} fault rules can be active at once`);
    const added = list.map((rule, i) => validRule(rule, `rules[${i}]`));
    this.rules.push(...added);
    return added.map((rule) => ({ ...rule }));
  }

  list(): FaultRule[] {
    return this.rules.map((rule) => ({ ...rule }));
  }

  clear(): void {
    this.rules = [];
  }

  /**
   * The fault for one authenticated request under /api/service (`path` relative to it),
   * using up one time of the rule that matched; null when the request is to be served as usual.
   */
  take(method: string, path: string): FaultPlan | null {
    const latency = this.latency();
    const index = this.rules.findIndex((rule) => matches(rule, method, path));
    if (index !== -1) {
      const rule = this.rules[index]!;
      if (rule.remaining !== null && --rule.remaining === 0) this.rules.splice(index, 1);
      return {
        fault: rule.id,
        delayMs: latency + rule.delayMs,
        then: rule.then,
        after: rule.after,
        landsAfterMs: rule.landsAfterMs,
        reply: rule.then === 'status' ? statusReply(rule) : undefined,
      };
    }
    const failRate = this.ambient.failRate ?? 0;
    if (failRate > 0 && this.random() < failRate) {
      const status = this.random() < 0.5 ? 502 : 503;
      return {
        fault: '--fail-rate',
        delayMs: latency,
        then: 'status',
        after: false,
        landsAfterMs: null,
        reply: statusReply({ status, body: 'json', code: defaultCode(status), retryAfter: null }),
      };
    }
    return latency > 0 ? { fault: null, delayMs: latency, then: 'answer', after: false, landsAfterMs: null } : null;
  }

  private latency(): number {
    const span = this.ambient.latency;
    if (!span) return 0;
    return span.minMs + Math.round(this.random() * (span.maxMs - span.minMs));
  }
}

function matches(rule: FaultRule, method: string, path: string): boolean {
  if (rule.method !== null && rule.method !== method) return false;
  if (rule.path === null) return true;
  return rule.path.endsWith('*') ? path.startsWith(rule.path.slice(0, -1)) : path === rule.path;
}

function statusReply(rule: Pick<FaultRule, 'status' | 'body' | 'code' | 'retryAfter'>): Reply {
  const status = rule.status!;
  const reason = STATUS_CODES[status] ?? 'Error';
  const headers: Headers = rule.retryAfter == null ? {} : { 'retry-after': rule.retryAfter };
  switch (rule.body) {
    case 'empty':
      return { status, body: new TextBody('', null), headers };
    case 'html':
      // What a proxy in front of the service answers: an HTML page, not the API's JSON.
      return {
        status,
        body: new TextBody(`<html><head><title>${status} ${reason}</title></head><body><h1>${status} ${reason}</h1></body></html>\n`, 'text/html'),
        headers,
      };
    default: {
      const code = rule.code === undefined ? defaultCode(status) : rule.code;
      const error = `${reason} (a fault injected by the reference server)`;
      return { status, body: code === null ? { error } : { error, code }, headers };
    }
  }
}

function validRule(value: unknown, where: string): FaultRule {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw invalid(`${where} must be an object`);
  const input = value as Record<string, unknown>;
  onlyFields(input, RULE_FIELDS);
  const then = has(input, 'then') ? oneOf(input.then, ACTIONS, `${where}.then`) : has(input, 'status') ? 'status' : 'answer';
  if (then !== 'status') {
    const stray = STATUS_FIELDS.find((field) => has(input, field));
    if (stray) throw invalid(`${where}.${stray} applies only to "then": "status"`);
  }
  const times = has(input, 'times') ? count(input.times, `${where}.times`, 1_000_000) : 1;
  const rule: FaultRule = {
    id: `flt_${randomBytes(8).toString('hex')}`,
    method: has(input, 'method') && input.method !== null ? validMethod(input.method, `${where}.method`) : null,
    path: has(input, 'path') && input.path !== null ? validPath(input.path, `${where}.path`) : null,
    times,
    remaining: times === 0 ? null : times,
    delayMs: has(input, 'delayMs') ? count(input.delayMs, `${where}.delayMs`, MAX_DELAY_MS) : 0,
    then,
    after: has(input, 'after') ? bool(input.after, `${where}.after`) : false,
    landsAfterMs: has(input, 'landsAfterMs') && input.landsAfterMs !== null ? count(input.landsAfterMs, `${where}.landsAfterMs`, MAX_DELAY_MS) : null,
  };
  // The change lands late behind an answer given without it: there must be such an answer, and the change must not be made first.
  if (rule.landsAfterMs !== null && then === 'answer') throw invalid(`${where}.landsAfterMs needs an answer that replaces the real one ("then": "status", "reset" or "hang")`);
  if (rule.landsAfterMs !== null && rule.after) throw invalid(`${where}.landsAfterMs and "after": true exclude each other: the change is made after the answer, or before it`);
  if (then === 'status') {
    if (!has(input, 'status')) throw invalid(`${where}.status is required with "then": "status"`);
    const status = input.status;
    if (typeof status !== 'number' || !Number.isInteger(status) || status < 400 || status > 599) {
      throw invalid(`${where}.status must be an HTTP status from 400 to 599`);
    }
    const body = has(input, 'body') ? oneOf(input.body, BODIES, `${where}.body`) : 'json';
    if (body !== 'json' && has(input, 'code')) throw invalid(`${where}.code applies only to "body": "json"`);
    Object.assign(rule, {
      status,
      body,
      ...(body === 'json' ? { code: has(input, 'code') ? nullableText(input.code, `${where}.code`, 100) : defaultCode(status) } : {}),
      retryAfter: has(input, 'retryAfter') ? nullableText(input.retryAfter, `${where}.retryAfter`, 200) : null,
    });
  }
  return rule;
}

function oneOf<T extends string>(value: unknown, choices: readonly T[], where: string): T {
  if (!choices.includes(value as T)) throw invalid(`${where} must be one of ${choices.map((c) => `"${c}"`).join(', ')}`);
  return value as T;
}

function count(value: unknown, where: string, max: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > max) {
    throw invalid(`${where} must be a whole number from 0 to ${max}`);
  }
  return value;
}

function bool(value: unknown, where: string): boolean {
  if (typeof value !== 'boolean') throw invalid(`${where} must be true or false`);
  return value;
}

function validMethod(value: unknown, where: string): string {
  if (typeof value !== 'string' || !METHOD.test(value)) throw invalid(`${where} must be an HTTP method such as "POST"`);
  return value.toUpperCase();
}

/** Relative to /api/service, as in docs/contract.md; a full path copied from the request log is taken too. */
function validPath(value: unknown, where: string): string {
  if (typeof value !== 'string' || !value.startsWith('/') || value.length > 2_000) {
    throw invalid(`${where} must be a path starting with "/", such as "/user/api-keys" or "/user/api-keys/*"`);
  }
  if (value.startsWith(`${API_PREFIX}/`)) return value.slice(API_PREFIX.length);
  return value;
}

/**
 * Text that ends up in a header or body verbatim: visible ASCII and spaces only,
 * since anything else could not be sent as a header at all.
 */
function nullableText(value: unknown, where: string, max: number): string | null {
  if (value === null) return null;
  if (typeof value !== 'string' || value.length > max || !/^[\x20-\x7e]*$/.test(value)) {
    throw invalid(`${where} must be null or printable ASCII text of at most ${max} characters`);
  }
  return value;
}
