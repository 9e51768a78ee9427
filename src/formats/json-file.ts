// JSON documents on disk, plain or gzip-compressed, with deterministic bytes on write.
import { readFile, writeFile } from 'node:fs/promises';
import { gunzipSync, gzipSync } from 'node:zlib';
import { InputError } from '../errors.js';

export async function readJsonFile(path: string): Promise<unknown> {
  let raw: Buffer;
  try {
    raw = await readFile(path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new InputError([
      { file: path, path: '', message: code === 'ENOENT' ? 'no such file' : `cannot read (${code})` },
    ]);
  }
  let text: string;
  try {
    text = isGzip(raw) ? gunzipSync(raw).toString('utf8') : raw.toString('utf8');
  } catch {
    throw new InputError([
      { file: path, path: '', message: 'looks gzip-compressed but does not decompress' },
    ]);
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new InputError([{ file: path, path: '', message: `not valid JSON (${(err as Error).message})` }]);
  }
}

export async function writeJsonFile(path: string, doc: unknown): Promise<void> {
  await writeFile(path, encodeJson(path, doc));
}

export function encodeJson(path: string, doc: unknown): Buffer {
  const text = `${JSON.stringify(doc, null, 2)}\n`;
  // mtime 0 in the gzip header (zlib's default) keeps the bytes reproducible.
  return path.endsWith('.gz') ? gzipSync(text, { level: 6 }) : Buffer.from(text, 'utf8');
}

function isGzip(buf: Buffer): boolean {
  return buf.length >= 2 && buf[0] === 0x1f && buf[1] === 0x8b;
}
