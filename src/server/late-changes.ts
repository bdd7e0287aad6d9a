import type { Clock } from './clock.js';

/**
 * Changes a fault holds back (`landsAfterMs`, docs/contract.md §B), as a
 * gateway's upstream goes on with a request the gateway already answered:
 * each is made once the server's clock reaches its time, which real time
 * brings, or `POST /_local/clock` at once, so a test moves the clock
 * instead of waiting. Those still held when the server stops, or its world
 * is reset, are dropped: they would land in a world that is gone.
 */
export class LateChanges {
  private held: { atMs: number; make: () => Promise<void> }[] = [];
  private timer: NodeJS.Timeout | null = null;

  constructor(private readonly clock: Clock) {}

  /** `make` runs once the clock reads `atMs` or later; it settles, never rejects. */
  hold(atMs: number, make: () => Promise<void>): void {
    this.held.push({ atMs, make });
    void this.due();
  }

  /** Makes every change whose time has come (in the order held) and waits for them; the next is timed on the real clock. */
  async due(): Promise<void> {
    const now = this.clock.now();
    const ready = this.held.filter((change) => change.atMs <= now);
    this.held = this.held.filter((change) => change.atMs > now);
    this.schedule();
    await Promise.all(ready.map((change) => change.make()));
  }

  drop(): void {
    this.held = [];
    this.schedule();
  }

  private schedule(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    if (this.held.length === 0) return;
    const next = Math.min(...this.held.map((change) => change.atMs));
    this.timer = setTimeout(() => void this.due(), Math.max(0, next - this.clock.now()));
    this.timer.unref();
  }
}
