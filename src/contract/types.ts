import type { Plan } from './plans.js';

export type KeyStatus = 'enabled' | 'disabled' | 'expired';

export interface KeyRecord {
  id: string;
  name: string;
  hint: string;
  enabled: boolean;
  status: KeyStatus;
  workspaceId: string;
  createdAt: string;
  expiresAt: string | null;
  lastUsedAt: string | null;
}

/** The only response that ever carries a plaintext key. */
export interface CreatedKey extends KeyRecord {
  secret: string;
}

/** One page of the key list: `nextCursor`, sent back as `?cursor=`, names the next page; null on the last. */
export interface KeyList {
  keys: KeyRecord[];
  nextCursor: string | null;
}

export interface CreateKeyRequest {
  name: string;
  expiresAt?: string | null;
}

export interface PatchKeyRequest {
  enabled: boolean;
}

export interface RevokeResult {
  id: string;
  revoked: true;
}

export interface Workspace {
  id: string;
  name: string;
  plan: Plan;
  requestsPerMinute: number;
}

export interface User {
  id: string;
  name: string;
  activeWorkspaceId: string;
}

/** The single line `svc serve --local --json` prints once it listens. */
export interface LocalServerReady {
  url: string;
  apiKey: string | null;
  adminToken: string;
  userId: string;
  workspaceId: string;
  plan: Plan;
}

export interface ClockReading {
  now: string;
}
