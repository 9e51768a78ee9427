// Reading an input file as text, plain or gzip-compressed (told by its first bytes, not its
// name), with the one error an operator needs when it cannot be read.
import { readFile } from 'node:fs/promises';
import { gunzipSync } from 'node:zlib';
import { InputError } from '../errors.js';

export async function readTextFile(path: string): Promise<string> {
  let raw: Buffer;
  try {
    raw = await readFile(path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new InputError([
      { file: path, path: '', message: code === 'ENOENT' ? 'no such file' : `cannot read (${code})` },
    ]);
  }
  if (!isGzip(raw)) return raw.toString('utf8');
  try {
    return gunzipSync(raw).toString('utf8');
  } catch {
    throw new InputError([
      { file: path, path: '', message: 'looks gzip-compressed but does not decompress' },
    ]);
  }
}

function isGzip(buf: Buffer): boolean {
  return buf.length >= 2 && buf[0] === 0x1f && buf[1] === 0x8b;
}
