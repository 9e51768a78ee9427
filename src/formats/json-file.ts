// JSON documents on disk, plain or gzip-compressed, with deterministic bytes on write.
import { writeFile } from 'node:fs/promises';
import { gzipSync } from 'node:zlib';
import { InputError } from '../errors.js';
import { writingTo } from './output-path.js';
import { readTextFile } from './text-file.js';

export async function readJsonFile(path: string): Promise<unknown> {
  const text = await readTextFile(path);
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new InputError([{ file: path, path: '', message: `not valid JSON (${(err as Error).message})` }]);
  }
}

/** Written for the user only (0600 when created): snapshots and plans name every tenant's servers. */
export async function writeJsonFile(path: string, doc: unknown): Promise<void> {
  const bytes = encodeJson(path, doc);
  await writingTo(path, () => writeFile(path, bytes, { mode: 0o600 }));
}

export function encodeJson(path: string, doc: unknown): Buffer {
  const text = `${JSON.stringify(doc, null, 2)}\n`;
  // mtime 0 in the gzip header (zlib's default) keeps the bytes reproducible.
  return path.endsWith('.gz') ? gzipSync(text, { level: 6 }) : Buffer.from(text, 'utf8');
}
