// Control endpoints under /sim/: drive the simulator from tests and demos (clock, faults,
// failing migrations, host state, ratio pinning, servers and volumes placed directly) and read
// its true state.
import { type NewVolume, VOLUME_STATUSES, type VolumeStatus } from '../cinder-state.js';
import { exportSnapshot } from '../export.js';
import type { FaultInjector, FaultKind } from '../faults.js';
import { isFinalMigration } from '../migrations.js';
import { MIGRATION_STATUSES, type SimCloud, SimError } from '../model.js';
import { createServer, type NewServer } from '../server-lifecycle.js';
import { type Ctx, isRecord, type Route, route, sendJson } from './respond.js';

export const CONTROL_PREFIX = '/sim';

function bad(ctx: Ctx, message: string): void {
  sendJson(ctx, 400, { error: message });
}

export function controlRoutes(cloud: SimCloud, faults: FaultInjector): Route[] {
  const status = (): Record<string, unknown> => {
    cloud.sync();
    const migrations: Record<string, number> = {};
    for (const s of MIGRATION_STATUSES) migrations[s] = 0;
    for (const m of cloud.migrations) migrations[m.status] = (migrations[m.status] ?? 0) + 1;
    return {
      time: new Date(cloud.nowMs()).toISOString(),
      speed: cloud.clock.speed,
      load: cloud.load.description,
      hosts: cloud.hosts.length,
      servers: cloud.servers.length,
      aggregates: cloud.aggregates.length,
      serverGroups: cloud.groups.length,
      volumes: cloud.cinder.volumes.length,
      volumeSnapshots: cloud.cinder.snapshots.length,
      migrations,
      failMigrations: { all: cloud.failAllMigrations, servers: [...cloud.failServers] },
      faults: faults.list(),
      timing: cloud.timing,
      migrationProgress: cloud.migrationProgress,
    };
  };

  return [
    route('GET', '/status', (ctx) => sendJson(ctx, 200, status())),
    route('GET', '/snapshot', (ctx) => sendJson(ctx, 200, exportSnapshot(cloud))),
    route('POST', '/clock', (ctx) => {
      const b = isRecord(ctx.body) ? ctx.body : {};
      if (b.speed !== undefined) {
        if (typeof b.speed !== 'number' || !(b.speed >= 0))
          return bad(ctx, `speed: expected a number >= 0, got ${JSON.stringify(b.speed)}`);
        cloud.clock.setSpeed(b.speed);
      }
      if (b.advance !== undefined) {
        if (typeof b.advance !== 'number' || !(b.advance >= 0)) {
          return bad(ctx, `advance: expected seconds >= 0, got ${JSON.stringify(b.advance)}`);
        }
        cloud.advance(b.advance);
      }
      sendJson(ctx, 200, { time: new Date(cloud.nowMs()).toISOString(), speed: cloud.clock.speed });
    }),
    route('PUT', '/timing', (ctx) => {
      const b = isRecord(ctx.body) ? ctx.body : {};
      for (const [k, v] of Object.entries(b)) {
        if (!(k in cloud.timing))
          return bad(ctx, `timing.${k}: unknown; expected one of ${Object.keys(cloud.timing).join(', ')}`);
        if (typeof v !== 'number' || !(v >= 0))
          return bad(ctx, `timing.${k}: expected seconds >= 0, got ${JSON.stringify(v)}`);
      }
      Object.assign(cloud.timing, b);
      sendJson(ctx, 200, cloud.timing);
    }),
    route('GET', '/migrations', (ctx) => {
      cloud.sync();
      sendJson(ctx, 200, {
        migrations: cloud.migrations.map((m) => ({
          id: m.id,
          uuid: m.uuid,
          server: m.server.uuid,
          source: m.source,
          dest: m.dest,
          requestedHost: m.requestedHost,
          status: m.status,
          createdAt: new Date(m.createdMs).toISOString(),
          updatedAt: m.updatedMs === null ? null : new Date(m.updatedMs).toISOString(),
          // What happened on the simulated clock (from the call to the final record, as Nova's
          // created_at and updated_at say), holds and aborts included; null while in flight.
          durationSeconds:
            isFinalMigration(m) && m.updatedMs !== null ? (m.updatedMs - m.createdMs) / 1000 : null,
          // What the cost model planned for it.
          plannedSeconds: m.durationSeconds,
          error: cloud.lastErrors.get(m.id) ?? null,
        })),
      });
    }),
    route('POST', '/servers', (ctx) => {
      const b = isRecord(ctx.body) ? ctx.body : {};
      const f = isRecord(b.flavor) ? b.flavor : undefined;
      if (typeof b.name !== 'string' || !b.name) return bad(ctx, 'name: expected a non-empty string');
      if (typeof b.host !== 'string') return bad(ctx, 'host: expected a host name');
      const num = (k: string) =>
        f && typeof f[k] === 'number' && (f[k] as number) >= 0 ? (f[k] as number) : -1;
      if (!f || typeof f.name !== 'string' || num('vcpus') < 1 || num('ramMB') < 1 || num('diskGB') < 0) {
        return bad(
          ctx,
          'flavor: expected {"name": string, "vcpus": n >= 1, "ramMB": n >= 1, "diskGB": n >= 0}',
        );
      }
      const req: NewServer = {
        name: b.name,
        host: b.host,
        flavor: { name: f.name, vcpus: num('vcpus'), ramMB: num('ramMB'), diskGB: num('diskGB') },
      };
      if (typeof b.projectId === 'string') req.projectId = b.projectId;
      if (typeof b.sharedStorage === 'boolean') req.sharedStorage = b.sharedStorage;
      if (typeof b.group === 'string') req.group = b.group;
      try {
        const s = createServer(cloud, req);
        sendJson(ctx, 201, { server: { id: s.uuid, name: s.name, host: s.host } });
      } catch (e) {
        if (!(e instanceof SimError)) throw e;
        sendJson(ctx, e.status, { error: e.message });
      }
    }),
    // Volumes in any project (POST /volume/v3/.../volumes makes them only in the token's).
    route('POST', '/volumes', (ctx) => {
      const b = isRecord(ctx.body) ? ctx.body : {};
      const text = (k: string): string | undefined =>
        typeof b[k] === 'string' ? (b[k] as string) : undefined;
      const flag = (k: string): boolean | undefined =>
        typeof b[k] === 'boolean' ? (b[k] as boolean) : undefined;
      const name = text('name');
      const projectId = text('projectId');
      if (name === undefined) return bad(ctx, `name: expected a string, got ${JSON.stringify(b.name)}`);
      if (!projectId) return bad(ctx, `projectId: expected a project id, got ${JSON.stringify(b.projectId)}`);
      const checks: Record<string, (v: unknown) => boolean> = {
        sizeGB: (v) => typeof v === 'number',
        status: (v) => VOLUME_STATUSES.includes(v as VolumeStatus),
        attachedTo: (v) => typeof v === 'string',
        deleteOnTermination: (v) => typeof v === 'boolean',
        boot: (v) => typeof v === 'boolean',
        snapshots: (v) => Array.isArray(v) && v.every((x) => typeof x === 'string'),
      };
      for (const [k, ok] of Object.entries(checks))
        if (b[k] !== undefined && !ok(b[k]))
          return bad(ctx, `${k}: unexpected value ${JSON.stringify(b[k])}`);
      const req: NewVolume = { name, projectId };
      if (typeof b.sizeGB === 'number') req.sizeGB = b.sizeGB;
      if (b.status !== undefined) req.status = b.status as VolumeStatus;
      if (text('attachedTo') !== undefined) req.attachedTo = text('attachedTo') as string;
      if (flag('deleteOnTermination') !== undefined)
        req.deleteOnTermination = flag('deleteOnTermination') as boolean;
      if (flag('boot') !== undefined) req.boot = flag('boot') as boolean;
      try {
        const v = cloud.cinder.createVolume(req);
        const snapshots = ((b.snapshots as string[] | undefined) ?? []).map(
          (n) => cloud.cinder.createSnapshot({ volumeId: v.id, name: n }).id,
        );
        sendJson(ctx, 201, { volume: { id: v.id, name: v.name, status: v.status, snapshots } });
      } catch (e) {
        if (!(e instanceof SimError)) throw e;
        sendJson(ctx, e.status, { error: e.message });
      }
    }),
    route('GET', '/faults', (ctx) => sendJson(ctx, 200, { faults: faults.list() })),
    route('POST', '/faults', (ctx) => {
      const b = isRecord(ctx.body) ? ctx.body : {};
      const kinds: FaultKind[] = ['error', 'slow', 'timeout'];
      if (typeof b.pattern !== 'string') return bad(ctx, 'pattern: expected a regular expression string');
      if (!kinds.includes(b.kind as FaultKind))
        return bad(ctx, `kind: expected one of ${kinds.join(', ')}, got ${JSON.stringify(b.kind)}`);
      try {
        const rule = faults.add({
          pattern: b.pattern,
          kind: b.kind as FaultKind,
          ...(typeof b.rate === 'number' ? { rate: b.rate } : {}),
          ...(typeof b.status === 'number' ? { status: b.status } : {}),
          ...(typeof b.delayMs === 'number' ? { delayMs: b.delayMs } : {}),
          ...(typeof b.count === 'number' ? { count: b.count } : {}),
        });
        sendJson(ctx, 201, { fault: rule });
      } catch (e) {
        bad(ctx, e instanceof Error ? e.message : String(e));
      }
    }),
    route('DELETE', '/faults', (ctx) => {
      faults.clear();
      sendJson(ctx, 200, { faults: [] });
    }),
    route('DELETE', '/faults/{id}', (ctx, [id]) => {
      if (!faults.remove(Number(id))) return sendJson(ctx, 404, { error: `no fault ${id}` });
      sendJson(ctx, 200, { faults: faults.list() });
    }),
    route('GET', '/migration-failures', (ctx) =>
      sendJson(ctx, 200, { all: cloud.failAllMigrations, servers: [...cloud.failServers] }),
    ),
    route('PUT', '/migration-failures', (ctx) => {
      const b = isRecord(ctx.body) ? ctx.body : {};
      if (b.all !== undefined && typeof b.all !== 'boolean') return bad(ctx, 'all: expected true or false');
      if (
        b.servers !== undefined &&
        (!Array.isArray(b.servers) || b.servers.some((x) => typeof x !== 'string'))
      ) {
        return bad(ctx, 'servers: expected a list of server UUIDs');
      }
      cloud.failAllMigrations = b.all === true;
      cloud.failServers.clear();
      for (const s of (b.servers as string[] | undefined) ?? []) cloud.failServers.add(s);
      sendJson(ctx, 200, { all: cloud.failAllMigrations, servers: [...cloud.failServers] });
    }),
    route('POST', '/hosts/{name}', (ctx, [name]) => {
      const h = cloud.hostsByName.get(name as string);
      if (!h) return sendJson(ctx, 404, { error: `no host ${name}` });
      const b = isRecord(ctx.body) ? ctx.body : {};
      if (b.down !== undefined) {
        if (typeof b.down !== 'boolean') return bad(ctx, 'down: expected true or false');
        h.down = b.down;
      }
      if (b.maxConcurrentLiveMigrations !== undefined) {
        const n = b.maxConcurrentLiveMigrations;
        if (typeof n !== 'number' || !Number.isInteger(n) || n < 1) {
          return bad(ctx, `maxConcurrentLiveMigrations: expected an integer >= 1, got ${JSON.stringify(n)}`);
        }
        h.maxConcurrentLiveMigrations = n;
      }
      if (b.cpuAllocationRatio !== undefined) {
        const r = b.cpuAllocationRatio;
        if (r === null) cloud.pinCpuAllocationRatio(h.name, null);
        else if (isRecord(r) && typeof r.ratio === 'number' && r.ratio > 0) {
          const period = typeof r.periodSeconds === 'number' && r.periodSeconds > 0 ? r.periodSeconds : 60;
          cloud.pinCpuAllocationRatio(h.name, { ratio: r.ratio, periodSeconds: period });
        } else
          return bad(
            ctx,
            'cpuAllocationRatio: expected null or {"ratio": number > 0, "periodSeconds"?: number > 0}',
          );
      }
      sendJson(ctx, 200, {
        name: h.name,
        down: h.down,
        maxConcurrentLiveMigrations: h.maxConcurrentLiveMigrations,
        cpuAllocationRatio: h.ratioPin,
      });
    }),
  ];
}
