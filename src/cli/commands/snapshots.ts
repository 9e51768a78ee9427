// `aicerine snapshots record|list|download`: snapshots the service records on demand and keeps
// in its state folder (through the service API).
import { writeFile } from 'node:fs/promises';
import type { Command } from 'commander';
import { checkOutputPath } from '../../formats/output-path.js';
import {
  type ApiFlags,
  apiClient,
  type Paged,
  printJsonOr,
  printPage,
  withApiOptions,
} from '../api-client.js';
import { describeCommand } from '../command-list.js';

interface SnapshotRow {
  id: string;
  takenAt: string;
  aggregate: string | null;
  sizeBytes: number | null;
  recordedAt: string;
}

const size = (n: number | null) =>
  n === null ? null : n >= 1 << 20 ? `${(n / (1 << 20)).toFixed(1)} MiB` : `${(n / 1024).toFixed(1)} KiB`;

export function register(program: Command): void {
  const snapshots = program.command('snapshots').description(describeCommand('snapshots'));
  withApiOptions(
    snapshots.command('record').description('record a snapshot of the whole cloud now; the service keeps it'),
  )
    .option('--comment <text>', 'why, for the audit log')
    .action(async (flags: ApiFlags & { comment?: string }) => {
      const api = await apiClient(flags);
      const s = (await api.post(
        '/v1/snapshots',
        flags.comment !== undefined ? { comment: flags.comment } : {},
      )) as SnapshotRow;
      printJsonOr(flags.json, s, () => `snapshot ${s.id}: taken ${s.takenAt}, ${size(s.sizeBytes)}\n`);
    });
  withApiOptions(snapshots.command('list').description('recorded snapshots, newest first'))
    .option('--limit <n>', 'snapshots per page (1-1000)')
    .option('--cursor <c>', 'the page after this cursor')
    .action(async (flags: ApiFlags & { limit?: string; cursor?: string }) => {
      const api = await apiClient(flags);
      const page = (await api.get('/v1/snapshots', {
        limit: flags.limit,
        cursor: flags.cursor,
      })) as Paged<SnapshotRow>;
      printPage(
        page,
        ['ID', 'TAKEN', 'SIZE', 'RECORDED'],
        (s) => [s.id, s.takenAt, size(s.sizeBytes), s.recordedAt],
        flags.json,
      );
    });
  withApiOptions(
    snapshots
      .command('download')
      .description('a recorded snapshot as aicerine-snapshot/1 (docs/formats.md); .gz output is compressed')
      .argument('<id>'),
  )
    .requiredOption('-o, --output <file>', 'where to write it (.json or .json.gz)')
    .action(async (id: string, flags: ApiFlags & { output: string }) => {
      await checkOutputPath(flags.output);
      const api = await apiClient(flags);
      const doc = await api.get(`/v1/snapshots/${encodeURIComponent(id)}`);
      const { encodeJson } = await import('../../formats/json-file.js');
      const bytes = encodeJson(flags.output, doc);
      await writeFile(flags.output, bytes, { mode: 0o600 });
      process.stdout.write(`snapshot ${id} written to ${flags.output} (${size(bytes.length)})\n`);
    });
}
