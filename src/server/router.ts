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

/** The parameters of a pattern that has none; shared, and nothing writes to a match's params. */
const NO_PARAMS: Record<string, string> = Object.freeze({});

export class Router<H> {
  private readonly routes: Route<H>[] = [];
  /**
   * The answers for a pattern without parameters, made once, by path then method: the busiest
   * routes (`/user/api-keys`) are one lookup, with no split of the path and no match object made.
   * Only a pattern no earlier route matches is here, so the first route to match still wins.
   */
  private readonly literal = new Map<string, { byMethod: Map<string, Match<H>>; notAllowed: Match<H> }>();

  add(pattern: string, methods: Record<string, H>): this {
    const segments = split(pattern);
    const route: Route<H> = { segments, methods: new Map(Object.entries(methods)) };
    const shadowed = this.routes.some((earlier) => matchSegments(earlier.segments, segments) !== null);
    if (!segments.some((s) => s.startsWith(':')) && !shadowed) {
      const byMethod = new Map<string, Match<H>>();
      for (const [method, handler] of route.methods) byMethod.set(method, { kind: 'found', handler, params: NO_PARAMS });
      this.literal.set(pattern, { byMethod, notAllowed: notAllowed(route) });
    }
    this.routes.push(route);
    return this;
  }

  match(method: string, path: string): Match<H> {
    const literal = this.literal.get(path);
    if (literal !== undefined) return literal.byMethod.get(method) ?? literal.notAllowed;
    const segments = split(path);
    for (const route of this.routes) {
      const params = matchSegments(route.segments, segments);
      if (!params) continue;
      const handler = route.methods.get(method);
      if (handler === undefined) return notAllowed(route);
      return { kind: 'found', handler, params };
    }
    return { kind: 'not-found' };
  }
}

function notAllowed<H>(route: Route<H>): Match<H> {
  return { kind: 'method-not-allowed', allow: [...route.methods.keys()].join(', ') };
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
