import type { ChildProcess } from 'node:child_process';
import type { Dispatcher } from 'undici';
import type { LocalServerReady } from '../../src/contract/types.js';

export const SVC_BIN: string;

export interface ServeProcess extends LocalServerReady {
  /** The ready line as printed. */
  ready: LocalServerReady;
  port: number;
  child: ChildProcess;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Milliseconds from the spawn to the ready line. */
  startMs: number;
  /** Everything printed so far, the ready line included. */
  stdout(): string;
  stderr(): string;
  alive(): boolean;
  stop(): Promise<void>;
}

export function serveProcess(
  args?: string[],
  options?: { bin?: string; env?: Record<string, string | undefined>; cwd?: string },
): Promise<ServeProcess>;

export interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json: any;
}

export function call(
  baseUrl: string,
  method: string,
  path: string,
  token: string | null,
  body?: unknown,
  options?: { raw?: string | Buffer; headers?: Record<string, string>; dispatcher?: Dispatcher },
): Promise<Answer>;

export function windowEndsIn(server: { url: string; adminToken: string }, seconds: number): Promise<void>;
