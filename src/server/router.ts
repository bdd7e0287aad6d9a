/**
 * A path-and-method table. Patterns are literal segments and `:name`
 * parameters, each parameter matching one non-empty segment, still
 * percent-encoded: handlers decide what a valid id is.
 */
export type Match<H> =
  | { kind: 'found'; handler: H; params: Record<string, string> }
  | { kind: 'method-not-allowed'; allow: string }
  | { kind: 'not-found' };

interface Route<H> {
  segments: string[];
  methods: Map<string, H>;
}

export class Router<H> {
  private readonly routes: Route<H>[] = [];

  add(pattern: string, methods: Record<string, H>): this {
    this.routes.push({ segments: split(pattern), methods: new Map(Object.entries(methods)) });
    return this;
  }

  match(method: string, path: string): Match<H> {
    const segments = split(path);
    for (const route of this.routes) {
      const params = matchSegments(route.segments, segments);
      if (!params) continue;
      const handler = route.methods.get(method);
      if (handler === undefined) return { kind: 'method-not-allowed', allow: [...route.methods.keys()].join(', ') };
      return { kind: 'found', handler, params };
    }
    return { kind: 'not-found' };
  }
}

function split(path: string): string[] {
  return path.split('/').slice(1);
}

function matchSegments(pattern: string[], actual: string[]): Record<string, string> | null {
  if (pattern.length !== actual.length) return null;
  const params: Record<string, string> = {};
  for (let i = 0; i < pattern.length; i++) {
    const want = pattern[i]!;
    const got = actual[i]!;
    if (want.startsWith(':')) {
      if (got === '') return null;
      params[want.slice(1)] = got;
    } else if (want !== got) {
      return null;
    }
  }
  return params;
}
