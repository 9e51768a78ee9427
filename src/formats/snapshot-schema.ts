// Schema of "aicerine-snapshot/1" (../shared/spec/formats.md). Extra fields are kept:
// implementations may add fields, never rename or drop the core ones.
import { z } from 'zod';
import {
  PROFILE_RESOLUTIONS,
  PROFILES_FORMAT,
  SERVER_GROUP_POLICIES,
  SNAPSHOT_FORMAT,
} from '../model/snapshot.js';
import { isoTime, nonEmpty, nonNeg, nonNegInt, posInt, positive, text } from './schema-helpers.js';

const inventory = z.looseObject({
  total: posInt(),
  reserved: nonNegInt(),
  allocationRatio: positive(),
});

const load = z.record(z.string(), nonNeg());

const host = z.looseObject({
  name: nonEmpty(),
  availabilityZone: nonEmpty(),
  aggregates: z.array(nonEmpty(), { error: 'expected a list of aggregate names' }),
  service: z.looseObject({
    state: z.enum(['up', 'down']),
    status: z.enum(['enabled', 'disabled']),
    forcedDown: z.boolean({ error: 'expected true or false' }),
    disabledReason: z.string().nullable().optional(),
  }),
  inventory: z.record(z.string(), inventory),
  usage: z.record(z.string(), nonNeg()),
  load: load.optional(),
  maxConcurrentLiveMigrations: posInt().optional(),
});

const flavor = z.looseObject({
  name: text(),
  vcpus: posInt(),
  ramMB: posInt(),
  diskGB: nonNegInt(),
  extraSpecs: z.record(z.string(), z.string({ error: 'expected a string' })).optional(),
});

const server = z.looseObject({
  id: nonEmpty(),
  name: text(),
  projectId: text(),
  host: nonEmpty(),
  status: nonEmpty(),
  taskState: z.string({ error: 'expected a string or null' }).nullable(),
  flavor,
  sharedStorage: z.boolean({ error: 'expected true or false' }),
  sriov: z.boolean({ error: 'expected true or false' }).optional(),
  metadata: z.record(z.string(), z.string({ error: 'expected a string' })).optional(),
  load: load.optional(),
  dirtyRateMBps: nonNeg().optional(),
});

const serverGroup = z.looseObject({
  id: nonEmpty(),
  name: text(),
  policy: z.enum(SERVER_GROUP_POLICIES),
  rules: z.looseObject({ max_server_per_host: posInt().optional() }).optional(),
  members: z.array(nonEmpty()),
});

const migration = z.looseObject({
  serverId: nonEmpty(),
  source: nonEmpty(),
  dest: nonEmpty(),
  status: nonEmpty(),
  ramMB: nonNegInt(),
  startedAt: isoTime(),
  finishedAt: isoTime(),
});

const slotFigures = z.array(nonNeg().nullable(), { error: 'expected a list of numbers or null' });

const serverProfile = z.looseObject({
  cpu: slotFigures.optional(),
  memoryMB: slotFigures.optional(),
  samples: z.array(nonNegInt(), { error: 'expected a list of sample counts' }),
});

// Slot counts are checked against the resolution in snapshot-consistency, where the message can
// name the server.
const profiles = z.looseObject({
  format: z.literal(PROFILES_FORMAT, { error: `expected "${PROFILES_FORMAT}"` }),
  resolution: z.enum(PROFILE_RESOLUTIONS),
  quantile: z.number({ error: 'expected a number' }).gt(0).max(1),
  timeZone: nonEmpty(),
  from: isoTime(),
  to: isoTime(),
  refreshedAt: isoTime(),
  minSamples: posInt(),
  servers: z.record(nonEmpty(), serverProfile),
  errors: z
    .record(
      nonEmpty(),
      z.looseObject({
        meanAbsolute: nonNeg(),
        currentLoadAbsolute: nonNeg().optional(),
        hours: nonNegInt(),
        from: isoTime(),
        to: isoTime(),
      }),
    )
    .optional(),
});

export const snapshotSchema = z.looseObject({
  format: z.literal(SNAPSHOT_FORMAT, { error: `expected "${SNAPSHOT_FORMAT}"` }),
  takenAt: isoTime(),
  source: text(),
  hosts: z.array(host),
  servers: z.array(server),
  serverGroups: z.array(serverGroup),
  migrationHistory: z.array(migration).optional(),
  profiles: profiles.optional(),
});
