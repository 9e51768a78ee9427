import { InputError } from '../errors.js';
import { SNAPSHOT_FORMAT, type Snapshot } from '../model/snapshot.js';
import { readJsonFile, writeJsonFile } from './json-file.js';
import { toInputIssues } from './schema-helpers.js';
import { checkSnapshotConsistency } from './snapshot-consistency.js';
import { snapshotSchema } from './snapshot-schema.js';

/** Validates a snapshot document (schema, then consistency); throws InputError listing every problem. */
export function parseSnapshot(doc: unknown, file?: string): Snapshot {
  refuseUnknownFormat(doc, SNAPSHOT_FORMAT, file);
  const result = snapshotSchema.safeParse(doc, { reportInput: true });
  if (!result.success) throw new InputError(toInputIssues(result.error, doc, file));
  const snapshot = result.data as Snapshot;
  const issues = checkSnapshotConsistency(snapshot, file);
  if (issues.length > 0) throw new InputError(issues);
  return snapshot;
}

export async function readSnapshot(path: string): Promise<Snapshot> {
  return parseSnapshot(await readJsonFile(path), path);
}

export async function writeSnapshot(path: string, snapshot: Snapshot): Promise<void> {
  await writeJsonFile(path, snapshot);
}

/** A document of another format or version is refused before field checks, with one clear line. */
export function refuseUnknownFormat(doc: unknown, expected: string, file?: string): void {
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) {
    throw new InputError([
      { file, path: '', message: `expected a JSON object with "format": "${expected}"` },
    ]);
  }
  const format = (doc as Record<string, unknown>).format;
  if (format !== expected) {
    throw new InputError([
      {
        file,
        path: 'format',
        message:
          format === undefined ? `missing; expected "${expected}"` : `unknown format, expected "${expected}"`,
        ...(format === undefined ? {} : { value: format }),
      },
    ]);
  }
}
