/** One header's value; undici gives repeated headers as arrays. */
export function header(res: { headers: Record<string, string | string[] | undefined> }, name: string): string | null {
  const value = res.headers[name];
  if (Array.isArray(value)) return value[0] ?? null;
  return value ?? null;
}
