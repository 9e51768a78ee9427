// An output file is checked before any work is done, so that an hour of recording or a plan is
// not thrown away on a typo in `-o`: the path must not be a folder, its folder must exist and be
// writable. Writing itself then reports in the same words should it still fail.
import { constants } from 'node:fs';
import { access, stat } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { InputError } from '../errors.js';

function refuse(file: string, message: string): never {
  throw new InputError([{ file, path: '', message }]);
}

export async function checkOutputPath(file: string): Promise<void> {
  const existing = await stat(file).catch(() => undefined);
  if (existing?.isDirectory()) refuse(file, 'is a folder; give a file name to write to');
  const folder = dirname(resolve(file));
  const parent = await stat(folder).catch(() => undefined);
  if (parent === undefined) refuse(file, `cannot be written: the folder ${folder} does not exist`);
  if (!parent.isDirectory()) refuse(file, `cannot be written: ${folder} is not a folder`);
  try {
    await access(existing ? file : folder, constants.W_OK);
  } catch {
    refuse(
      file,
      existing
        ? 'cannot be written: no permission to replace it'
        : `cannot be written: no permission to write in ${folder}`,
    );
  }
}

/** Runs a write, turning a file-system failure into a sentence naming the file. */
export async function writingTo<T>(file: string, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (typeof code !== 'string' || !/^E[A-Z]+$/.test(code)) throw err;
    const why: Record<string, string> = {
      EISDIR: 'it is a folder',
      ENOENT: 'its folder does not exist',
      EACCES: 'no permission',
      EPERM: 'no permission',
      ENOSPC: 'the disk is full',
      EROFS: 'the file system is read-only',
    };
    return refuse(file, `cannot be written: ${why[code] ?? code}`);
  }
}
