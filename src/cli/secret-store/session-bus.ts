/**
 * Whether a Secret Service answers on the D-Bus session bus, asked before
 * the keyring library is used on Linux. The library falls back to the
 * kernel's keyutils keyring when it cannot reach a Secret Service, and that
 * keyring is gone at logout or reboot: a key saved there would be lost
 * while the profile still pointed at it. So svc asks the bus itself, with
 * the few messages that takes (the D-Bus wire format, little-endian), and
 * uses the library only once a Secret Service owns its name: the check
 * names what is missing (the bus, or a Secret Service on it), and the
 * entries are pinned to the Secret Service besides (keyring.ts), for one
 * that stops answering after the check.
 */
import { createConnection, type Socket } from 'node:net';

/** Why the Secret Service cannot be used, in words for the person at the terminal. */
export class NoSecretService extends Error {
  constructor(
    readonly problem: string,
    /** True when there is a bus but no Secret Service on it. */
    readonly busAnswered: boolean,
  ) {
    super(problem);
    this.name = 'NoSecretService';
  }
}

const SECRETS = 'org.freedesktop.secrets';

/**
 * Resolves once a Secret Service owns its name on the bus at `address`
 * (DBUS_SESSION_BUS_ADDRESS), starting it by D-Bus activation as the
 * library would; rejects with NoSecretService otherwise. `signal` ends the
 * wait (the caller's bound).
 */
export async function checkSecretService(address: string | undefined, signal: AbortSignal): Promise<void> {
  if (!address) throw new NoSecretService('no D-Bus session bus: DBUS_SESSION_BUS_ADDRESS is not set', false);
  const path = socketPath(address);
  const socket = await connect(path, address, signal);
  try {
    const bus = new BusConversation(socket, signal);
    await bus.authenticate();
    await bus.call('Hello', '', Buffer.alloc(0));
    const owned = await bus.call('NameHasOwner', 's', stringValue(SECRETS));
    if (owned.error === null && owned.firstWord === 1) return;
    // Not running: a bus that can start one on demand (a .service file for the name) does so now.
    const started = await bus.call('StartServiceByName', 'su', Buffer.concat([pad(stringValue(SECRETS), 4), uint32(0)]));
    if (started.error) throw new NoSecretService(`no Secret Service on the D-Bus session bus (${SECRETS}: ${started.error})`, true);
  } finally {
    socket.destroy();
  }
}

/** The socket of the first unix address (`unix:path=` or `unix:abstract=`, values %-escaped) in the list. */
function socketPath(address: string): string {
  for (const entry of address.split(';')) {
    const [transport, rest = ''] = entry.split(/:(.*)/s, 2);
    if (transport !== 'unix') continue;
    const keys = new Map(rest.split(',').map((pair) => pair.split(/=(.*)/s, 2) as [string, string]));
    const path = keys.get('path');
    if (path) return decodeURIComponent(path);
    const abstract = keys.get('abstract');
    if (abstract) return `\0${decodeURIComponent(abstract)}`;
  }
  throw new NoSecretService(`svc reaches the D-Bus session bus over a unix socket, and DBUS_SESSION_BUS_ADDRESS names none (${address})`, false);
}

function connect(path: string, address: string, signal: AbortSignal): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = createConnection({ path, signal });
    socket.once('connect', () => {
      socket.off('error', failed);
      resolve(socket);
    });
    const failed = (error: NodeJS.ErrnoException) => {
      socket.destroy();
      reject(error.name === 'AbortError' ? error : new NoSecretService(`no D-Bus session bus answers at ${address} (${error.code ?? error.message})`, false));
    };
    socket.once('error', failed);
  });
}

/** One client's messages with the bus: authentication, then method calls to the bus itself, one at a time. */
class BusConversation {
  private received = Buffer.alloc(0);
  private serial = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(
    private readonly socket: Socket,
    private readonly signal: AbortSignal,
  ) {
    socket.on('data', (chunk: Buffer) => {
      this.received = Buffer.concat([this.received, chunk]);
      this.waiting.splice(0).forEach((wake) => wake());
    });
    const gone = () => this.waiting.splice(0).forEach((wake) => wake());
    socket.on('close', gone);
    socket.on('error', gone);
    signal.addEventListener('abort', gone, { once: true });
  }

  /** SASL EXTERNAL: the bus knows the caller's uid from the socket; svc only names it. */
  async authenticate(): Promise<void> {
    const uid = Buffer.from(String(process.getuid?.() ?? 0)).toString('hex');
    this.socket.write(`\0AUTH EXTERNAL ${uid}\r\n`);
    const line = await this.readLine();
    if (!line.startsWith('OK ')) throw new NoSecretService(`the D-Bus session bus refused svc (${line.slice(0, 80)})`, false);
    this.socket.write('BEGIN\r\n');
  }

  /** Calls `member` of org.freedesktop.DBus: the error name of its answer, if it is one, else the answer's first 32-bit word (a boolean or a number). */
  async call(member: string, signature: string, body: Buffer): Promise<{ error: string | null; firstWord: number | null }> {
    const serial = ++this.serial;
    this.socket.write(methodCall(serial, member, signature, body));
    for (;;) {
      const message = await this.readMessage();
      if (message.replySerial === serial) {
        return message.type === ERROR ? { error: message.errorName ?? 'an error', firstWord: null } : { error: null, firstWord: message.firstWord };
      }
    }
  }

  private async readLine(): Promise<string> {
    for (;;) {
      const end = this.received.indexOf('\r\n');
      if (end >= 0) {
        const line = this.received.subarray(0, end).toString('latin1');
        this.received = this.received.subarray(end + 2);
        return line;
      }
      await this.more();
    }
  }

  private async readMessage(): Promise<ReplyHeader> {
    for (;;) {
      const header = this.received.length >= 16 ? parseHeader(this.received) : null;
      if (header && this.received.length >= header.length) {
        this.received = this.received.subarray(header.length);
        return header;
      }
      await this.more();
    }
  }

  private more(): Promise<void> {
    if (this.signal.aborted) return Promise.reject(this.signal.reason);
    if (this.socket.destroyed || this.socket.readableEnded) {
      return Promise.reject(new NoSecretService('the D-Bus session bus closed the connection', false));
    }
    return new Promise((resolve) => this.waiting.push(resolve));
  }
}

const METHOD_CALL = 1;
const ERROR = 3;
const FIELD = { path: 1, interface: 2, member: 3, errorName: 4, replySerial: 5, destination: 6, signature: 8 } as const;

function methodCall(serial: number, member: string, signature: string, body: Buffer): Buffer {
  const fields: Buffer[] = [
    headerField(FIELD.path, 'o', stringValue('/org/freedesktop/DBus')),
    headerField(FIELD.interface, 's', stringValue('org.freedesktop.DBus')),
    headerField(FIELD.member, 's', stringValue(member)),
    headerField(FIELD.destination, 's', stringValue('org.freedesktop.DBus')),
    ...(signature ? [headerField(FIELD.signature, 'g', signatureValue(signature))] : []),
  ];
  // Each field is a struct, aligned to 8: every field but the last is padded to it here.
  const array = Buffer.concat(fields.map((field, i) => (i < fields.length - 1 ? pad(field, 8) : field)));
  const fixed = Buffer.alloc(16);
  fixed.write('l', 0, 'latin1');
  fixed.writeUInt8(METHOD_CALL, 1);
  fixed.writeUInt8(1, 3);
  fixed.writeUInt32LE(body.length, 4);
  fixed.writeUInt32LE(serial, 8);
  fixed.writeUInt32LE(array.length, 12);
  return Buffer.concat([pad(Buffer.concat([fixed, array]), 8), body]);
}

/** A header field: its code, then a variant of one basic type; the value is aligned within the message, which the 4-byte offset of a field keeps. */
function headerField(code: number, type: string, value: Buffer): Buffer {
  const head = Buffer.from([code, 1, type.charCodeAt(0), 0]);
  return Buffer.concat([head, value]);
}

function stringValue(text: string): Buffer {
  const bytes = Buffer.from(text, 'utf8');
  return Buffer.concat([uint32(bytes.length), bytes, Buffer.alloc(1)]);
}

function signatureValue(text: string): Buffer {
  return Buffer.concat([Buffer.from([text.length]), Buffer.from(text, 'latin1'), Buffer.alloc(1)]);
}

function uint32(value: number): Buffer {
  const buffer = Buffer.alloc(4);
  buffer.writeUInt32LE(value);
  return buffer;
}

function pad(buffer: Buffer, to: number): Buffer {
  const rest = buffer.length % to;
  return rest === 0 ? buffer : Buffer.concat([buffer, Buffer.alloc(to - rest)]);
}

interface ReplyHeader {
  type: number;
  length: number;
  replySerial: number | null;
  errorName: string | null;
  firstWord: number | null;
}

/** The header of the message at the start of `data`, and the message's whole length; what svc reads of it. */
function parseHeader(data: Buffer): ReplyHeader {
  const little = data[0] === 0x6c;
  const u32 = (at: number) => (little ? data.readUInt32LE(at) : data.readUInt32BE(at));
  const fieldsLength = u32(12);
  const bodyStart = align(16 + fieldsLength, 8);
  const bodyLength = u32(4);
  const header: ReplyHeader = { type: data[1]!, length: bodyStart + bodyLength, replySerial: null, errorName: null, firstWord: null };
  if (data.length < header.length) return header;
  if (bodyLength >= 4) header.firstWord = u32(bodyStart);
  let at = 16;
  while (at < 16 + fieldsLength) {
    at = align(at, 8);
    const code = data[at]!;
    const typeLength = data[at + 1]!;
    const type = data.toString('latin1', at + 2, at + 2 + typeLength);
    at += 3 + typeLength;
    if (type === 'u' || type === 'b' || type === 'i') {
      at = align(at, 4);
      if (code === FIELD.replySerial) header.replySerial = u32(at);
      at += 4;
    } else if (type === 's' || type === 'o') {
      at = align(at, 4);
      const length = u32(at);
      if (code === FIELD.errorName) header.errorName = data.toString('utf8', at + 4, at + 4 + length);
      at += 4 + length + 1;
    } else if (type === 'g') {
      at += 1 + data[at]! + 1;
    } else {
      // No header field of another type is defined; one would end what svc can read, and it needs nothing past it.
      break;
    }
  }
  return header;
}

function align(at: number, to: number): number {
  return Math.ceil(at / to) * to;
}
