// A yardstick for bench/scan-tree.mjs: what Node itself takes to walk a tree
// and read every file in it as svc scan does (no .git directories, no
// symbolic links followed), looking only for the bytes `sk_` in each, no key
// pattern. Two ways: synchronously, one file after another on the main
// thread (the default), or with --async, fs.promises.readFile 64 files at a
// time through libuv's thread pool. Prints files, bytes and how many files
// hold `sk_`.
//
//   node bench/scan-read-floor.mjs [--async] TREE
import { closeSync, openSync, readdirSync, readSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';

const NEEDLE = Buffer.from('sk_');
const asyncMode = process.argv.includes('--async');
const root = process.argv.filter((a) => a !== '--async').at(-1);
let files = 0;
let bytes = 0;
let holding = 0;

function walkSync(dir) {
  const buffer = Buffer.allocUnsafe(8 << 20);
  const visit = (d) => {
    for (const entry of readdirSync(d, { withFileTypes: true })) {
      const path = join(d, entry.name);
      if (entry.isDirectory()) {
        if (entry.name !== '.git') visit(path);
      } else if (entry.isFile()) {
        const fd = openSync(path, 'r');
        let found = false;
        for (let n = readSync(fd, buffer, 0, buffer.length, null); n > 0; n = readSync(fd, buffer, 0, buffer.length, null)) {
          bytes += n;
          if (!found && buffer.subarray(0, n).indexOf(NEEDLE) !== -1) found = true;
        }
        closeSync(fd);
        files++;
        if (found) holding++;
      }
    }
  };
  visit(dir);
}

async function walkAsync(dir) {
  const paths = [];
  const visit = async (d) => {
    const entries = await readdir(d, { withFileTypes: true });
    await Promise.all(
      entries.map(async (entry) => {
        const path = join(d, entry.name);
        if (entry.isDirectory()) {
          if (entry.name !== '.git') await visit(path);
        } else if (entry.isFile()) paths.push(path);
      }),
    );
  };
  await visit(dir);
  let next = 0;
  await Promise.all(
    Array.from({ length: 64 }, async () => {
      while (next < paths.length) {
        const content = await readFile(paths[next++]);
        files++;
        bytes += content.length;
        if (content.indexOf(NEEDLE) !== -1) holding++;
      }
    }),
  );
}

if (asyncMode) await walkAsync(root);
else walkSync(root);
process.stdout.write(`${JSON.stringify({ files, bytes, holding })}\n`);
