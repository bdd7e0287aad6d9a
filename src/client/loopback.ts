/**
 * 127.0.0.0/8, ::1 and localhost: this machine. Such addresses never go
 * through a proxy (as Go's net/http, and so gh, decides) and may carry a key
 * over plain http (docs/contract.md §C1).
 */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  return host === 'localhost' || host.endsWith('.localhost') || host === '::1' || /^127(\.\d{1,3}){3}$/.test(host);
}
