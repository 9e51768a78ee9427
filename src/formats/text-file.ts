// Reading an input file as text, plain or gzip-compressed (told by its first bytes, not its
// name), with the one error an operator needs when it cannot be read. Binary files are refused
// without echoing their bytes, and nothing larger than MAX_INPUT_BYTES is read (docs/formats.md).
import { readFile, stat } from 'node:fs/promises';
import { gunzipSync } from 'node:zlib';
import { InputError } from '../errors.js';

/** Largest input text, compressed or not: about the longest string V8 holds (2^29 characters). */
export const MAX_INPUT_BYTES = 512 * 1024 * 1024;

const MIB = 1024 * 1024;

export interface ReadTextOptions {
  /** false: a gzip-compressed file is refused as binary (a configuration is written by hand). */
  gzip?: boolean;
}

export async function readTextFile(path: string, opts: ReadTextOptions = {}): Promise<string> {
  const refuse = (message: string): never => {
    throw new InputError([{ file: path, path: '', message }]);
  };
  let raw: Buffer;
  try {
    const info = await stat(path);
    if (info.isDirectory()) refuse('is a folder, not a file');
    if (info.size > MAX_INPUT_BYTES) {
      refuse(
        `is ${Math.round(info.size / MIB)} MiB, more than the ${MAX_INPUT_BYTES / MIB} MiB an input file may have`,
      );
    }
    raw = await readFile(path);
  } catch (err) {
    if (err instanceof InputError) throw err;
    const code = (err as NodeJS.ErrnoException).code;
    return refuse(code === 'ENOENT' ? 'no such file' : `cannot read (${code})`);
  }
  let text: Buffer = raw;
  if (isGzip(raw) && opts.gzip === false)
    refuse('is a binary file (gzip-compressed), not text (a JSON or YAML document was expected)');
  if (isGzip(raw)) {
    try {
      text = gunzipSync(raw, { maxOutputLength: MAX_INPUT_BYTES });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') {
        refuse(`decompresses to more than the ${MAX_INPUT_BYTES / MIB} MiB an input file may have`);
      }
      refuse('looks gzip-compressed but does not decompress');
    }
  }
  return decodeText(text, refuse);
}

// Control characters (other than tab, line ends and form feed) appear in neither JSON nor YAML:
// with malformed UTF-8 they mean an image, an archive or the like. Say so, never print the bytes.
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
const CONTROL = /[\u0000-\u0008\u000b\u000e-\u001f\u007f]/;

function decodeText(buf: Buffer, refuse: (message: string) => never): string {
  const binary = 'is a binary file, not text (a JSON or YAML document was expected)';
  if (buf.includes(0)) refuse(binary);
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(buf);
  } catch {
    return refuse('is not UTF-8 text (a JSON or YAML document was expected)');
  }
  if (CONTROL.test(text)) refuse(binary);
  return text;
}

function isGzip(buf: Buffer): boolean {
  return buf.length >= 2 && buf[0] === 0x1f && buf[1] === 0x8b;
}
