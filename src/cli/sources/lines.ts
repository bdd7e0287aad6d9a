/** A child's output read as it comes, one record at a time: lines, or NUL-separated fields (paths as git writes them with -z). */

/** Each line of `stream` (UTF-8, without its newline). */
export function readLines(stream: NodeJS.ReadableStream, onLine: (line: string) => void): Promise<void> {
  return readSeparated(stream, 10, (bytes) => onLine(bytes.toString('utf8')));
}

/** Each NUL-separated field of `stream` (UTF-8). */
export function readNul(stream: NodeJS.ReadableStream, onField: (field: string) => void): Promise<void> {
  return readSeparated(stream, 0, (bytes) => onField(bytes.toString('utf8')));
}

async function readSeparated(stream: NodeJS.ReadableStream, separator: number, onRecord: (bytes: Buffer) => void): Promise<void> {
  let rest: Buffer = Buffer.alloc(0);
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    const data = rest.length === 0 ? chunk : Buffer.concat([rest, chunk]);
    let at = 0;
    for (let end = data.indexOf(separator, at); end !== -1; end = data.indexOf(separator, at)) {
      onRecord(data.subarray(at, end));
      at = end + 1;
    }
    rest = Buffer.from(data.subarray(at));
  }
  if (rest.length > 0) onRecord(rest);
}
