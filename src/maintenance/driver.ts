// The task kind `maintain-aggregate`: drives one maintenance campaign (docs/maintenance.md). It
// runs in the task worker like any task, so it survives restarts (another worker adopts it, and
// everything it knows is in the campaign's row) and holds no host lock itself: each host's drain
// and validation are child tasks (evacuate-compute, validate-compute) that take the host's lock
// while they run, so the balancer keeps off exactly the hosts being worked on.
//
// Every pass: an abort asked ends the campaign; each host in flight goes on a step when it can
// (its child task ended, the operator said done, nova-compute restarted); then, unless paused,
// new hosts are taken out while fewer than `parallel` are out and the rest of the aggregate can
// take the servers of every host out at once (drainVerdict). Hosts are taken out only while no
// drain runs, a whole wave disabled before any of its evacuations starts: a running drain never
// has a destination disabled under it, and a server is never sent to a host about to be drained.
// Each evacuation takes the campaign's pending hosts only as a last resort. Each step writes its intent before
// acting and looks for what a crashed run did before acting again, so a resumed run repeats no
// step but the hand-over (at least once).

import type { NovaService } from '../cloud/openstack/nova.js';
import { recordSnapshot } from '../cloud/record.js';
import { aggregateConfig } from '../config/aggregate.js';
import { InputError } from '../errors.js';
import type { Snapshot } from '../model/snapshot.js';
import type { TaskService } from '../tasks/service.js';
import {
  type JsonObject,
  requireActuator,
  type TaskContext,
  TaskFailedError,
  type TaskHandler,
  type TaskRecord,
  TaskRequestError,
} from '../tasks/types.js';
import { acknowledged, type HandoverEvent, handOver, handoverId } from './handover.js';
import type { CampaignRepository } from './ports.js';
import { drainVerdict } from './trial.js';
import {
  type Campaign,
  campaignActor,
  type HostProgress,
  isFinalHostState,
  isInFlight,
  maintenanceReason,
  type Unmovable,
} from './types.js';
import type { CampaignSleeper, CampaignWakeups } from './wakeups.js';
import { mutateCampaign, mutateHost } from './writes.js';

export const MAINTAIN_KIND = 'maintain-aggregate';

export interface MaintainArgs {
  campaign: string;
}

export interface MaintainDeps {
  campaigns: CampaignRepository;
  /** The task service of this process (built after the registry that holds this handler). */
  tasks: () => TaskService;
  /** Cuts the sleep between passes short when the campaign changes in this process. */
  wakeups: CampaignWakeups;
  /** How the cloud is read for the drain check (default: a recording through the reader). */
  snapshot?: (ctx: TaskContext<MaintainArgs, null>) => Promise<Snapshot>;
}

type Ctx = TaskContext<MaintainArgs, null>;

export function maintainAggregateHandler(deps: MaintainDeps): TaskHandler<MaintainArgs, null> {
  return {
    kind: MAINTAIN_KIND,
    description: 'drive a rolling-maintenance campaign (created by `aicerine maintenance start`)',
    internal: true,
    coordinator: true,
    parse(raw) {
      const r = raw as Record<string, unknown> | null;
      if (
        r === null ||
        typeof r !== 'object' ||
        typeof r.campaign !== 'string' ||
        !/^\d{1,15}$/.test(r.campaign) ||
        Object.keys(r).length !== 1
      )
        throw new InputError([{ path: 'campaign', message: 'expected a campaign id', value: r?.campaign }]);
      return { campaign: r.campaign };
    },
    preflight: async (args) => [{ kind: MAINTAIN_KIND, args: { campaign: args.campaign }, hosts: [] }],
    run: (ctx) => new Driver(deps, ctx).run(),
  };
}

class Driver {
  private readonly id: string;
  private readonly actor: string;
  private lastError: string | null = null;
  /**
   * The hosts' states when the next host last had to wait for capacity: until one of them
   * changes, the answer is the same, and the cloud is not recorded again for it.
   */
  private waitedAt: { key: string; note: string } | null = null;

  constructor(
    private readonly deps: MaintainDeps,
    private readonly ctx: Ctx,
  ) {
    this.id = ctx.args.campaign;
    this.actor = campaignActor(this.id);
  }

  private now = (): string => new Date(this.ctx.clock.now()).toISOString();

  private host(h: string, change: (p: HostProgress, c: Campaign) => Partial<HostProgress> | null) {
    return mutateHost(this.deps.campaigns, this.id, h, this.now, change);
  }

  async run(): Promise<JsonObject> {
    const sleeper = this.deps.wakeups.attach(this.id);
    try {
      return await this.passes(sleeper);
    } finally {
      sleeper.detach();
    }
  }

  private async passes(sleeper: CampaignSleeper): Promise<JsonObject> {
    for (;;) {
      this.ctx.signal.throwIfAborted();
      const c = await this.deps.campaigns.get(this.id);
      if (c === null) throw new TaskFailedError(`maintenance campaign ${this.id} no longer exists`);
      if (c.state === 'DONE' || c.state === 'ABORTED') return summary(c);
      try {
        const ended = await this.pass(c);
        if (ended !== null) return summary(ended);
        if (this.lastError !== null) {
          this.lastError = null;
          await this.note((n) => (n?.startsWith('error: ') ? null : n));
        }
      } catch (err) {
        if (this.ctx.signal.aborted) throw this.ctx.signal.reason ?? err;
        // A cloud or store hiccup: said on the campaign, tried again next pass.
        const why = `error: ${message(err)}`;
        if (why !== this.lastError) this.ctx.logger.warn(`maintenance ${this.id}: ${why}`);
        this.lastError = why;
        await this.note(() => why).catch(() => undefined);
      }
      await this.ctx.progress(progressOf(await this.deps.campaigns.get(this.id)));
      await sleeper.sleep(this.ctx.config.maintenance.pollIntervalMs, this.ctx.signal);
    }
  }

  private note(change: (note: string | null) => string | null): Promise<Campaign> {
    return mutateCampaign(this.deps.campaigns, this.id, this.now, (c) => {
      const next = change(c.note);
      return next === c.note ? null : { note: next };
    });
  }

  /** One pass; returns the campaign when it ended. */
  private async pass(start: Campaign): Promise<Campaign | null> {
    if (start.abortRequested) return this.abort(start);
    // A run that failed between taking a wave out and asking for its evacuations: the whole
    // wave is disabled before the first of them can choose destinations.
    for (const h of start.hosts)
      if (h.state === 'draining' && h.evacuateTask === null) await this.disable(h.host);
    for (const h of start.hosts) if (isInFlight(h.state)) await this.advance(h.host);
    let c = (await this.deps.campaigns.get(this.id)) ?? start;
    if (c.abortRequested) return this.abort(c);
    if (c.state === 'RUNNING') await this.startHosts(c);
    c = (await this.deps.campaigns.get(this.id)) ?? c;
    if (c.hosts.every((h) => isFinalHostState(h.state))) {
      const at = this.now();
      return mutateCampaign(this.deps.campaigns, this.id, this.now, (x) =>
        x.state === 'DONE' || x.state === 'ABORTED' || x.abortRequested
          ? null
          : { state: 'DONE', endedAt: at, note: null },
      );
    }
    return null;
  }

  private async abort(c: Campaign): Promise<Campaign> {
    for (const h of c.hosts) {
      const child =
        h.state === 'draining' ? h.evacuateTask : h.state === 'validating' ? h.validateTask : null;
      if (child === null) continue;
      await this.deps
        .tasks()
        .cancel(child, this.actor)
        .catch((err) => {
          if (!(err instanceof TaskRequestError)) throw err;
        });
    }
    const at = this.now();
    await this.ctx.audit.record('maintenance.aborted', `maintenance:${this.id}`, {
      inFlight: c.hosts.filter((h) => isInFlight(h.state)).map((h) => `${h.host} (${h.state})`),
    });
    return mutateCampaign(this.deps.campaigns, this.id, this.now, (x) => ({
      state: 'ABORTED',
      endedAt: at,
      hosts: x.hosts.map((h) =>
        isInFlight(h.state)
          ? {
              ...h,
              state: 'aborted',
              endedAt: at,
              note: `aborted while ${h.state}: left as it was (${h.state === 'ready' || h.state === 'returned' || h.state === 'validating' ? 'empty and disabled' : 'disabled, its evacuation cancelled'})`,
            }
          : h,
      ),
    }));
  }

  private async service(host: string): Promise<NovaService | null> {
    const [svc] = await this.ctx.reader.nova.listServices('nova-compute', host);
    return svc ?? null;
  }

  /** A child task this campaign asked for the host after `since` (a crashed run may have made it). */
  private async findChild(kind: string, host: string, since: string | null): Promise<TaskRecord | null> {
    const page = await this.deps.tasks().list({ kind, host }, { limit: 20 });
    return (
      page.items.find(
        (t) => t.requestedBy === this.actor && (since === null || t.requestedAt >= since) && !t.afterBatch,
      ) ?? null
    );
  }

  private async advance(host: string): Promise<void> {
    const c = await this.deps.campaigns.get(this.id);
    const h = c?.hosts.find((x) => x.host === host);
    if (c === undefined || c === null || h === undefined) return;
    switch (h.state) {
      case 'draining':
        return this.advanceDrain(h);
      case 'ready':
        return this.advanceReady(c, h);
      case 'returned':
        return this.readmit(c, h);
      case 'validating':
        return this.advanceValidation(h);
      default:
        return;
    }
  }

  private async advanceDrain(h: HostProgress): Promise<void> {
    let taskId = h.evacuateTask;
    if (taskId === null) {
      const found = await this.findChild('evacuate-compute', h.host, h.startedAt);
      if (found !== null) taskId = found.id;
      else {
        // Here rather than when it was taken out: a run that failed in between disables it now.
        await this.disable(h.host);
        try {
          const c = await this.deps.campaigns.get(this.id);
          const lastResort = (c?.hosts ?? [])
            .filter((x) => x.state === 'pending' && x.host !== h.host)
            .map((x) => x.host);
          const [t] = await this.deps
            .tasks()
            .create(
              'evacuate-compute',
              { host: h.host, ...(lastResort.length > 0 ? { lastResort } : {}) },
              this.actor,
            );
          taskId = t?.id ?? null;
        } catch (err) {
          if (!(err instanceof TaskRequestError)) throw err;
          if (err.status === 409) {
            // Another task holds the host (an operator's evacuation): tried again next pass.
            await this.host(h.host, () => ({ note: `waiting to evacuate: ${err.message}` }));
            return;
          }
          await this.host(h.host, () => ({
            state: 'drain-failed',
            endedAt: this.now(),
            note: `its evacuation was refused: ${err.message}`,
          }));
          return;
        }
      }
      await this.host(h.host, () => ({ evacuateTask: taskId, note: `evacuating (task ${taskId})` }));
    }
    if (taskId === null) return;
    const t = await this.deps.tasks().get(taskId);
    if (t === null) {
      await this.host(h.host, () => ({ evacuateTask: null, note: `task ${taskId} vanished; asking again` }));
      return;
    }
    if (t.state === 'ERROR') {
      await this.host(h.host, () => ({
        state: 'drain-failed',
        endedAt: this.now(),
        note: `evacuation task ${t.id} failed: ${t.error ?? 'no reason given'}; the host stays disabled`,
      }));
      return;
    }
    if (t.state !== 'DONE') {
      const detail = t.waitingReason ?? t.progress.detail;
      await this.host(h.host, (p) => {
        const note = `evacuating (task ${t.id}): ${detail}`;
        return p.note === note ? null : { note };
      });
      return;
    }
    const result = evacuationResult(t.result);
    const at = this.now();
    if (result.cannotMove.length > 0) {
      await this.host(h.host, () => ({
        state: 'not-drained',
        drainedAt: null,
        endedAt: at,
        moved: result.moved,
        cannotMove: result.cannotMove,
        note: `${result.cannotMove.length} server(s) cannot move (${result.cannotMove
          .map((u) => `${u.name || u.server}: ${u.why}`)
          .join('; ')}); the host stays disabled and is not handed over`,
      }));
      return;
    }
    await this.host(h.host, () => ({
      state: 'ready',
      drainedAt: at,
      moved: result.moved,
      cannotMove: [],
      note: 'empty; handing it over',
    }));
    const now = await this.deps.campaigns.get(this.id);
    const ready = now?.hosts.find((x) => x.host === h.host);
    if (now && ready) await this.advanceReady(now, ready);
  }

  private async advanceReady(c: Campaign, h: HostProgress): Promise<void> {
    const s = c.settings;
    if (h.handedOverAt === null) {
      const at = this.now();
      const event: HandoverEvent = {
        event: 'aicerine.maintenance.ready',
        id: handoverId(c.id, h.host),
        campaign: c.id,
        aggregate: c.aggregate,
        host: h.host,
        at,
        returnWhen: s.returnWhen,
        doneCommand: `aicerine maintenance done ${h.host}`,
      };
      // Each answer is written as it comes: a crash after it leaves that channel alone next time.
      const outcome = await handOver(s, event, h.handover, (channel, answer) =>
        this.host(h.host, (p) => ({ handover: { ...p.handover, [channel]: answer } })).then(() => {}),
      );
      await this.ctx.audit.record('maintenance.ready', `host:${h.host}`, {
        campaign: c.id,
        webhook: outcome.webhook,
        command: outcome.command,
        ...(acknowledged(h.handover.webhook) || acknowledged(h.handover.command)
          ? { acknowledgedBefore: h.handover }
          : {}),
      });
      await this.host(h.host, () => ({
        handedOverAt: at,
        handover: outcome,
        note:
          s.returnWhen === 'done'
            ? `ready for maintenance: waiting for \`aicerine maintenance done ${h.host}\``
            : `ready for maintenance: waiting for nova-compute on ${h.host} to go down and come up again (or \`aicerine maintenance done ${h.host}\`)`,
      }));
      return;
    }
    if (s.returnWhen !== 'service-restart') return;
    const svc = await this.service(h.host);
    if (svc === null) return;
    const down = svc.state === 'down' || svc.forcedDown;
    if (down && h.sawDownAt === null) {
      await this.host(h.host, () => ({
        sawDownAt: this.now(),
        note: `nova-compute on ${h.host} went down: waiting for it to come up`,
      }));
    } else if (!down && h.sawDownAt !== null) {
      await this.host(h.host, (p) =>
        p.state === 'ready'
          ? { state: 'returned', returnedAt: this.now(), returnedBy: 'nova-compute restarted', note: 'back' }
          : null,
      );
    }
  }

  private async readmit(c: Campaign, h: HostProgress): Promise<void> {
    if (c.state === 'PAUSED') {
      await this.host(h.host, (p) => {
        const note = 'back; re-admission waits for the campaign to resume';
        return p.note === note ? null : { note };
      });
      return;
    }
    const svc = await this.service(h.host);
    if (svc === null) {
      await this.host(h.host, () => ({
        state: 'failed-validation',
        endedAt: this.now(),
        note: 'Nova has no nova-compute service on it any more',
      }));
      return;
    }
    if (svc.state === 'down' || svc.forcedDown) {
      await this.host(h.host, (p) => {
        const note = `back, but nova-compute is down: re-admission waits for it to come up`;
        return p.note === note ? null : { note };
      });
      return;
    }
    if (c.settings.validate) {
      await this.host(h.host, () => ({ state: 'validating', validateTask: null, note: 'validating' }));
      await this.advanceValidation({ ...h, state: 'validating', validateTask: null });
      return;
    }
    if (svc.status === 'disabled')
      await requireActuator(this.ctx, MAINTAIN_KIND).setServiceStatus(svc.id, 'enabled');
    await this.ctx.audit.record('maintenance.readmitted', `host:${h.host}`, { campaign: c.id });
    await this.host(h.host, () => ({ state: 'done', endedAt: this.now(), note: 're-admitted (enabled)' }));
  }

  private async advanceValidation(h: HostProgress): Promise<void> {
    let taskId = h.validateTask;
    if (taskId === null) {
      const found = await this.findChild('validate-compute', h.host, h.returnedAt);
      if (found !== null) taskId = found.id;
      else {
        try {
          const created = await this.deps
            .tasks()
            .create('validate-compute', { hosts: [h.host], keepEnabled: true }, this.actor);
          taskId = created.find((t) => !t.afterBatch)?.id ?? null;
        } catch (err) {
          if (!(err instanceof TaskRequestError)) throw err;
          await this.host(h.host, () => ({ note: `waiting to validate: ${err.message}` }));
          return;
        }
      }
      await this.host(h.host, () => ({ validateTask: taskId, note: `validating (task ${taskId})` }));
    }
    if (taskId === null) return;
    const t = await this.deps.tasks().get(taskId);
    if (t === null) {
      await this.host(h.host, () => ({ validateTask: null, note: `task ${taskId} vanished; asking again` }));
      return;
    }
    if (t.state === 'DONE') {
      await this.host(h.host, () => ({
        state: 'done',
        endedAt: this.now(),
        note: `passed validation (task ${t.id}) and re-admitted (enabled)`,
      }));
    } else if (t.state === 'ERROR') {
      await this.host(h.host, () => ({
        state: 'failed-validation',
        endedAt: this.now(),
        note: `${t.error ?? 'validation failed'} (task ${t.id}); the host stays disabled`,
      }));
    } else {
      const note = `validating (task ${t.id}): ${t.waitingReason ?? t.progress.detail}`;
      await this.host(h.host, (p) => (p.note === note ? null : { note }));
    }
  }

  /** Takes pending hosts out while fewer than `parallel` are and the rest can take their servers. */
  private async startHosts(c: Campaign): Promise<void> {
    const out = c.hosts.filter((h) => isInFlight(h.state)).map((h) => h.host);
    const pending = c.hosts.filter((h) => h.state === 'pending');
    const draining = c.hosts.filter((h) => h.state === 'draining').map((h) => h.host);
    const wave: string[] = [];
    let waitNote: string | null = null;
    const key = JSON.stringify(c.hosts.map((h) => h.state));
    if (pending.length > 0 && out.length < c.settings.parallel && draining.length > 0)
      waitNote = `${pending[0]!.host} waits for the drain of ${draining.join(', ')} to end: hosts are taken out between drains, so none is disabled under a running drain`;
    else if (this.waitedAt?.key === key) waitNote = this.waitedAt.note;
    else if (pending.length > 0 && out.length < c.settings.parallel) {
      this.waitedAt = null;
      const snapshot = await (this.deps.snapshot ?? recordThroughReader)(this.ctx);
      const policy = aggregateConfig(this.ctx.config, c.aggregate).policy;
      const mayStop = this.ctx.config.tasks.evacuate.mayStopMetadataKey;
      for (const h of pending) {
        if (out.length >= c.settings.parallel) break;
        const refusal = await this.refusal(h.host, snapshot, () =>
          drainVerdict(snapshot, policy, c.aggregate, [...out, h.host], mayStop),
        );
        if (refusal !== null && out.length > 0) {
          // Not now: it may fit once the hosts out now are back.
          waitNote = `${h.host} waits: the rest of ${c.aggregate} cannot take its servers while ${out.join(', ')} ${out.length === 1 ? 'is' : 'are'} out (${refusal})`;
          this.waitedAt = { key, note: waitNote };
          break;
        }
        if (refusal !== null) {
          await this.ctx.audit.record('maintenance.refused', `host:${h.host}`, {
            campaign: c.id,
            why: refusal,
          });
          await this.host(h.host, () => ({ state: 'refused', endedAt: this.now(), note: refusal }));
          continue;
        }
        wave.push(h.host);
        out.push(h.host);
      }
    }
    if (wave.length > 0) await this.takeOut(wave);
    const fresh = await this.deps.campaigns.get(this.id);
    if (fresh !== null && fresh.note !== waitNote && !fresh.note?.startsWith('error: '))
      await this.note(() => waitNote);
  }

  /** Why the host cannot be taken out now, or null. */
  private async refusal(host: string, snapshot: Snapshot, verdict: () => ReturnType<typeof drainVerdict>) {
    const svc = await this.service(host);
    if (svc === null) return 'Nova has no nova-compute service on it';
    if (svc.state === 'down' || svc.forcedDown)
      return `nova-compute on ${host} is down: an evacuation needs it up`;
    if (!snapshot.hosts.some((x) => x.name === host)) return 'not in the recorded cloud';
    try {
      const v = verdict();
      return v.ok ? null : v.reasons.slice(0, 5).join('; ') + (v.reasons.length > 5 ? '; ...' : '');
    } catch (err) {
      if (err instanceof InputError) return err.message;
      throw err;
    }
  }

  /** Marks the wave out, disables every host of it, then asks for their evacuations. */
  private async takeOut(wave: string[]): Promise<void> {
    const at = this.now();
    for (const host of wave)
      await this.host(host, (p) =>
        p.state === 'pending' ? { state: 'draining', startedAt: at, note: 'disabling' } : null,
      );
    for (const host of wave) await this.disable(host);
    for (const host of wave) {
      const now = await this.deps.campaigns.get(this.id);
      const h = now?.hosts.find((x) => x.host === host);
      if (h?.state === 'draining') await this.advanceDrain(h);
    }
  }

  /** Disables the host with the campaign's reason, unless it is disabled already. */
  private async disable(host: string): Promise<void> {
    const c = await this.deps.campaigns.get(this.id);
    const svc = await this.service(host);
    if (c === null || svc === null) return;
    const reason = maintenanceReason(c);
    const target = `host:${host}`;
    if (svc.status !== 'enabled') {
      // Disabled with this campaign's reason and no entry: a run killed between Nova's answer
      // and the audit write did it. The entry is owed, and written now, once.
      if (svc.disabledReason === reason && !(await this.ctx.audit.recorded('maintenance.disabled', target)))
        await this.ctx.audit.record('maintenance.disabled', target, {
          campaign: c.id,
          reason,
          note: 'written by a later run: the run that disabled the host stopped before writing it',
        });
      return;
    }
    await requireActuator(this.ctx, MAINTAIN_KIND).setServiceStatus(svc.id, 'disabled', reason);
    await this.ctx.audit.record('maintenance.disabled', target, { campaign: c.id, reason });
  }
}

async function recordThroughReader(ctx: Ctx): Promise<Snapshot> {
  const r = await recordSnapshot(ctx.reader, {
    source: `aicerine maintenance ${ctx.args.campaign}`,
    neutron: 'never',
    historyDays: 1,
  });
  return r.snapshot;
}

function evacuationResult(raw: unknown): { moved: { live: number; cold: number }; cannotMove: Unmovable[] } {
  const r = (raw ?? {}) as { liveMigrated?: unknown[]; coldMigrated?: unknown[]; cannotMove?: Unmovable[] };
  return {
    moved: { live: r.liveMigrated?.length ?? 0, cold: r.coldMigrated?.length ?? 0 },
    cannotMove: Array.isArray(r.cannotMove) ? r.cannotMove : [],
  };
}

function progressOf(c: Campaign | null) {
  if (c === null) return { done: 0, total: null, detail: 'campaign gone' };
  const ended = c.hosts.filter((h) => isFinalHostState(h.state)).length;
  const out = c.hosts.filter((h) => isInFlight(h.state)).map((h) => `${h.host} ${h.state}`);
  return {
    done: ended,
    total: c.hosts.length,
    detail: `campaign ${c.id} ${c.state}${out.length ? `: ${out.join(', ')}` : ''}${c.note ? ` (${c.note})` : ''}`,
  };
}

function summary(c: Campaign): JsonObject {
  return {
    campaign: c.id,
    aggregate: c.aggregate,
    state: c.state,
    hosts: c.hosts.map((h) => ({ host: h.host, state: h.state, note: h.note })),
  };
}

function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
