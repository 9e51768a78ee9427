// Reads an operator's YAML or JSON settings file (metrics policy, storage policy, site
// declarations); parse errors name the file and line.
import { parse as parseYaml } from 'yaml';
import { InputError } from '../errors.js';
import { readTextFile } from '../formats/text-file.js';

export async function readSettingsFile(path: string): Promise<unknown> {
  // Binary and oversized files are refused by name, never printed or read whole.
  const text = await readTextFile(path, { gzip: false });
  try {
    return parseYaml(text);
  } catch (e) {
    throw new InputError([
      { file: path, path: '', message: `not valid YAML or JSON: ${(e as Error).message}` },
    ]);
  }
}
