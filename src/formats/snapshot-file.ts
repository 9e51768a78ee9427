import { InputError } from '../errors.js';
import { SNAPSHOT_FORMAT, type Snapshot } from '../model/snapshot.js';
import { readJsonFile, writeJsonFile } from './json-file.js';
import { refuseUnknownFormat, toInputIssues } from './schema-helpers.js';
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
