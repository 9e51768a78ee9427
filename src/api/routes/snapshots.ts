// Snapshots an operator records on demand (POST), listed (GET) and downloaded as the
// aicerine-snapshot/1 document (docs/formats.md). Files live in the service's state folder
// (stateDir/snapshots, gzip-compressed); the store keeps where each one is.
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { z } from 'zod';
import { encodeJson } from '../../formats/json-file.js';
import { type ApiContext, actorOf, type ZodApp } from '../context.js';
import { ApiError, notFound } from '../errors.js';
import { errorBody, page, snapshotBody, snapshotParams, snapshotRecord, snapshotsQuery } from '../schemas.js';

function view(r: {
  id: string;
  takenAt: string;
  aggregate: string | null;
  sizeBytes: number | null;
  recordedAt: string;
}) {
  return {
    id: r.id,
    takenAt: r.takenAt,
    aggregate: r.aggregate,
    sizeBytes: r.sizeBytes,
    recordedAt: r.recordedAt,
  };
}

export function registerSnapshots(app: ZodApp, ctx: ApiContext): void {
  app.post(
    '/v1/snapshots',
    {
      config: { action: 'snapshot.record' },
      schema: {
        tags: ['snapshots'],
        summary: 'Record a snapshot of the whole cloud now and keep it',
        body: snapshotBody.nullish(),
        response: { 201: snapshotRecord, 503: errorBody },
      },
    },
    async (req, reply) => {
      if (ctx.snapshots === null)
        throw new ApiError(503, 'no-snapshot', 'this API runs without the service: it cannot read the cloud');
      const who = actorOf(req);
      const snap = await ctx.snapshots.record();
      // Snapshots hold every tenant's server names: the service user's only.
      await mkdir(ctx.snapshotDir, { recursive: true, mode: 0o700 });
      const stamp = snap.takenAt.replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z');
      const path = join(ctx.snapshotDir, `snapshot-${stamp}-${randomBytes(3).toString('hex')}.json.gz`);
      const bytes = encodeJson(path, snap);
      await writeFile(path, bytes, { flag: 'wx', mode: 0o600 });
      const at = ctx.now().toISOString();
      const rec = await ctx.store.snapshots.record({
        takenAt: snap.takenAt,
        aggregate: null,
        path,
        sizeBytes: bytes.length,
        recordedAt: at,
      });
      await ctx.store.audit.record({
        ...who,
        action: 'snapshot.record',
        target: `snapshot:${rec.id}`,
        detail: {
          hosts: snap.hosts.length,
          servers: snap.servers.length,
          sizeBytes: bytes.length,
          comment: req.body?.comment ?? null,
        },
        at,
      });
      return reply.code(201).send(view(rec));
    },
  );

  app.get(
    '/v1/snapshots',
    {
      config: { action: 'read' },
      schema: {
        tags: ['snapshots'],
        summary: 'Recorded snapshots, newest first',
        querystring: snapshotsQuery,
        response: { 200: page(snapshotRecord) },
      },
    },
    async (req) => {
      const p = await ctx.store.snapshots.list(
        {},
        {
          ...(req.query.limit !== undefined ? { limit: req.query.limit } : {}),
          cursor: req.query.cursor ?? null,
        },
      );
      return { items: p.items.map(view), nextCursor: p.nextCursor };
    },
  );

  app.get(
    '/v1/snapshots/:id',
    {
      config: { action: 'read' },
      schema: {
        tags: ['snapshots'],
        summary: 'Download a recorded snapshot: the aicerine-snapshot/1 document (docs/formats.md)',
        params: snapshotParams,
        response: {
          200: z.unknown().describe('the aicerine-snapshot/1 document (docs/formats.md)'),
          404: errorBody,
          410: errorBody,
        },
      },
    },
    async (req, reply) => {
      const rec = await ctx.store.snapshots.get(req.params.id);
      if (rec === null) throw notFound(`snapshot ${req.params.id}`, 'params.id', req.params.id);
      if (rec.path === null)
        throw new ApiError(410, 'gone', `snapshot ${rec.id} was recorded without a file`);
      let bytes: Buffer;
      try {
        await stat(rec.path);
        bytes = await readFile(rec.path);
      } catch {
        throw new ApiError(410, 'gone', `snapshot ${rec.id}: its file is no longer in the state folder`);
      }
      const text = rec.path.endsWith('.gz') ? gunzipSync(bytes) : bytes;
      return reply
        .type('application/json; charset=utf-8')
        .header('Content-Disposition', `attachment; filename="aicerine-snapshot-${rec.id}.json"`)
        .send(text);
    },
  );
}
