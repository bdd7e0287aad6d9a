export const ERROR_CODES = [
  'UNAUTHORIZED',
  'RATE_LIMITED',
  'NOT_FOUND',
  'METHOD_NOT_ALLOWED',
  'INVALID_JSON',
  'INVALID_REQUEST',
  'PAYLOAD_TOO_LARGE',
  'INTERNAL',
  'UNAVAILABLE',
] as const;
export type ErrorCode = (typeof ERROR_CODES)[number];

export interface ErrorBody {
  error: string;
  code?: ErrorCode | string;
}

/** One text for every authentication failure, so a guesser learns nothing. */
export const UNAUTHORIZED_MESSAGE = 'Unauthorized: authentication failed';

export function isErrorBody(value: unknown): value is ErrorBody {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { error?: unknown }).error === 'string'
  );
}
