import type { AnswerRule } from './spec-server.js';

/** An answer with a body and a Content-Type, as a gateway or a framework sends one. */
export const page = (status: number, type: string, body: string): AnswerRule['then'] => ({ status, body, headers: () => ({ 'content-type': type }) });

/** What a server that does not offer an endpoint answers in its place: none of it the service's JSON. */
export const NOT_HERE: [string, AnswerRule['then']][] = [
  ['an HTML 404', page(404, 'text/html', '<!DOCTYPE html><html><body><h1>Not Found</h1></body></html>')],
  ['a text 404', page(404, 'text/plain', '404 page not found')],
  ["a gateway's 403", page(403, 'text/html', '<html><body>403 Forbidden</body></html>')],
  ['a JSON 403', page(403, 'application/json', '{"message":"Missing Authentication Token"}')],
  ['a 200 that is not JSON', page(200, 'text/html', '<html><body>Dashboard</body></html>')],
];

/** A request naming one key. */
export const KEY_PATH = /^\/user\/api-keys\/[^/]+$/;
