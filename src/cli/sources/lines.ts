/** Each NUL-separated field of `stream` (UTF-8), as it comes: paths as git writes them with -z. */
export async function readNul(stream: NodeJS.ReadableStream, onField: (field: string) => void): Promise<void> {
  let rest: Buffer = Buffer.alloc(0);
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    const data = rest.length === 0 ? chunk : Buffer.concat([rest, chunk]);
    let at = 0;
    for (let end = data.indexOf(0, at); end !== -1; end = data.indexOf(0, at)) {
      onField(data.subarray(at, end).toString('utf8'));
      at = end + 1;
    }
    rest = Buffer.from(data.subarray(at));
  }
  if (rest.length > 0) onField(rest.toString('utf8'));
}
