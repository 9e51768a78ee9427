// Runs the validation task kinds the way the task worker does (preflight, then run with a
// context per task, checkpoints kept between runs), against a real cloud session: the lab or the
// simulator. The task record is built here because the worker and its store are not the subject.
import { silentLogger } from '../../src/cloud/log.js';
import type { CloudSession } from '../../src/cloud/session.js';
import { parseServiceConfig } from '../../src/config/load.js';
import type { ServiceConfig } from '../../src/config/types.js';
import type { JsonValue } from '../../src/store/json.js';
import type { AnyTaskHandler, PlannedTask, TaskRecord } from '../../src/tasks/types.js';
import { validationTaskHandlers } from '../../src/validation/handler.js';

export interface AuditEntry {
  action: string;
  target: string;
  detail: JsonValue | undefined;
}

export async function validationConfig(validation: Record<string, unknown>): Promise<ServiceConfig> {
  return (await parseServiceConfig({ tasks: { validation } }, { file: undefined, baseDir: '/' })).config;
}

const handlers = new Map<string, AnyTaskHandler>(
  validationTaskHandlers({ pollMs: 200 }).map((h) => [h.kind, h as AnyTaskHandler]),
);

export function handler(kind: string): AnyTaskHandler {
  const h = handlers.get(kind);
  if (!h) throw new Error(`no handler ${kind}`);
  return h;
}

const clock = { now: () => Date.now(), sleep: (ms: number) => new Promise<void>((r) => setTimeout(r, ms)) };

export async function preflight(
  session: CloudSession,
  config: ServiceConfig,
  raw: unknown,
  unfinished: TaskRecord[] = [],
): Promise<PlannedTask[]> {
  const h = handler('validate-compute');
  return h.preflight(h.parse(raw), {
    reader: session,
    actuator: null,
    tasks: session,
    config,
    unfinished: async () => unfinished,
    clock,
  });
}

export function taskRecord(batch: string, p: PlannedTask, id: string): TaskRecord {
  const at = new Date().toISOString();
  return {
    id,
    kind: p.kind,
    args: p.args,
    requestedBy: 'test',
    requestedAt: at,
    batch,
    afterBatch: p.afterBatch === true,
    state: 'RUNNING',
    progress: { done: 0, total: null, detail: '' },
    result: null,
    error: null,
    waitingReason: null,
    hosts: p.hosts,
    checkpoint: null,
    owner: 'test',
    cancelRequested: false,
    attempts: 1,
    version: 1,
    startedAt: at,
    heartbeatAt: at,
    updatedAt: at,
    endedAt: null,
  };
}

export interface RunOutcome {
  ok: boolean;
  result: JsonValue | null;
  error: string | null;
  checkpoint: JsonValue | null;
  progress: string[];
  audit: AuditEntry[];
}

export async function runTask(
  session: CloudSession,
  config: ServiceConfig,
  task: TaskRecord,
  opts: { signal?: AbortSignal; checkpoint?: JsonValue | null } = {},
): Promise<RunOutcome> {
  const h = handler(task.kind);
  let checkpoint: JsonValue | null = opts.checkpoint ?? null;
  const progress: string[] = [];
  const audit: AuditEntry[] = [];
  try {
    const result = await h.run({
      task,
      args: task.args,
      progress: async (p) => {
        progress.push(p.detail);
      },
      checkpoint: {
        load: () => checkpoint,
        save: async (v) => {
          checkpoint = v as JsonValue;
        },
      },
      signal: opts.signal ?? new AbortController().signal,
      reader: session,
      actuator: null,
      tasks: session,
      config,
      audit: {
        record: async (action, target, detail) => {
          audit.push({ action, target, detail });
        },
        recorded: async (action, target) => audit.some((a) => a.action === action && a.target === target),
      },
      clock,
      logger: silentLogger,
    });
    return { ok: true, result: result as JsonValue, error: null, checkpoint, progress, audit };
  } catch (e) {
    const result = (e as { result?: JsonValue }).result ?? null;
    return { ok: false, result, error: (e as Error).message, checkpoint, progress, audit };
  }
}
