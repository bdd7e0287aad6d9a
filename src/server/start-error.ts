/** The server could not start; the message is meant for the operator as it is. */
export class ServerStartError extends Error {}
