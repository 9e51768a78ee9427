// Reads an operator's YAML or JSON settings file (metrics policy, storage policy, site
// declarations); parse errors name the file and line.
import { readFile } from 'node:fs/promises';
import { parse as parseYaml } from 'yaml';
import { InputError } from '../errors.js';

export async function readSettingsFile(path: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
    throw new InputError([
      {
        file: path,
        path: '',
        message: `cannot be read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`,
      },
    ]);
  }
  try {
    return parseYaml(text);
  } catch (e) {
    throw new InputError([
      { file: path, path: '', message: `not valid YAML or JSON: ${(e as Error).message}` },
    ]);
  }
}
