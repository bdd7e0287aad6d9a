/**
 * svc run's reaper for svc in-process, which may start no process: it
 * takes the orders svc gives it, in order, and says it holds the key.
 */
import type { Reaper, ReaperOrder, ReaperServer } from '../../src/cli/terminal/deps.js';

export function recordingReaper(): { start: (server: ReaperServer) => Reaper; orders: ReaperOrder[] } {
  const orders: ReaperOrder[] = [];
  return {
    orders,
    start(server) {
      orders.push({ server });
      return {
        arm: async (key) => {
          orders.push({ key });
          return true;
        },
        creating: (wanted) => void orders.push({ creating: wanted }),
        group: (pid) => void orders.push({ group: pid }),
        done: async () => void orders.push({ done: true }),
        onGone: () => {},
      };
    },
  };
}
