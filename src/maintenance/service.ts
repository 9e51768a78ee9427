// What the API asks of rolling maintenance (docs/maintenance.md): start a campaign (checked
// against the cloud first: every host must exist, be up, belong to the aggregate, and have its
// servers fit on the rest; nothing is created otherwise), list and show campaigns, pause,
// resume, abort, and "this host is back" (done). A campaign's driver is a maintain-aggregate task.

import type { Actuator } from '../cloud/actuator.js';
import { recordSnapshot } from '../cloud/record.js';
import type { CloudSession } from '../cloud/session.js';
import { aggregateConfig } from '../config/aggregate.js';
import type { ServiceConfig } from '../config/types.js';
import { InputError, type InputIssue } from '../errors.js';
import type { Clock } from '../executor/ports.js';
import type { Snapshot } from '../model/snapshot.js';
import type { Page, PageRequest } from '../store/paging.js';
import type { TaskService } from '../tasks/service.js';
import { isFinalTaskState, TaskRequestError } from '../tasks/types.js';
import { MAINTAIN_KIND } from './driver.js';
import type { CampaignFilter, CampaignRepository } from './ports.js';
import { drainVerdict } from './trial.js';
import {
  type Campaign,
  type CampaignSettings,
  isFinalCampaignState,
  isInFlight,
  newHostProgress,
  type ReturnWhen,
} from './types.js';
import type { CampaignWakeups } from './wakeups.js';
import { mutateCampaign } from './writes.js';

export interface StartRequest {
  aggregate: string;
  /** Default: every host of the aggregate, by name. */
  hosts?: string[];
  parallel?: number;
  validate?: boolean;
  returnWhen?: ReturnWhen;
}

export interface MaintenanceServiceDeps {
  campaigns: CampaignRepository;
  tasks: TaskService;
  reader: CloudSession;
  actuator: Actuator | null;
  tasksSession: CloudSession | null;
  config: ServiceConfig;
  clock: Clock;
  /** Tells a driver running in this process that its campaign changed (else it sees it at its poll). */
  wakeups: CampaignWakeups;
  /** How the cloud is read for the drain check (default: a recording through the reader). */
  snapshot?: () => Promise<Snapshot>;
}

export class MaintenanceService {
  constructor(private readonly deps: MaintenanceServiceDeps) {}

  private now = (): string => new Date(this.deps.clock.now()).toISOString();

  list(filter: CampaignFilter, page: PageRequest): Promise<Page<Campaign>> {
    return this.deps.campaigns.list(filter, page);
  }

  get(id: string): Promise<Campaign | null> {
    return this.deps.campaigns.get(id);
  }

  /**
   * Checks the request against the cloud and creates the campaign and its driver task. Throws
   * TaskRequestError (400, 404, 409) and creates nothing when refused.
   */
  async start(req: StartRequest, by: string): Promise<Campaign> {
    const { config, reader } = this.deps;
    const settings: CampaignSettings = {
      parallel: req.parallel ?? config.maintenance.parallel,
      validate: req.validate ?? config.maintenance.validate,
      returnWhen: req.returnWhen ?? config.maintenance.returnWhen,
      webhook: config.maintenance.webhook,
      command: config.maintenance.command,
    };
    if (!Number.isInteger(settings.parallel) || settings.parallel < 1)
      throw new TaskRequestError(400, 'parallel: expected a positive integer', [
        { path: 'parallel', message: 'expected a positive integer', value: settings.parallel },
      ]);
    if (this.deps.actuator === null)
      throw new TaskRequestError(
        409,
        'maintenance needs the actuator credential (credentials.actuator) to disable and enable hosts, which is not configured',
      );
    if (settings.validate && (config.validation === null || this.deps.tasksSession === null))
      throw new TaskRequestError(
        409,
        'validate: validate-compute is not configured (tasks.validation and credentials.tasks)',
        [{ path: 'validate', message: 'needs tasks.validation and credentials.tasks', value: true }],
      );

    const aggregate = (await reader.nova.listAggregates()).find((a) => a.name === req.aggregate);
    if (aggregate === undefined)
      throw new TaskRequestError(404, `aggregate: Nova has no aggregate ${JSON.stringify(req.aggregate)}`, [
        { path: 'aggregate', message: 'no such aggregate', value: req.aggregate },
      ]);
    const hosts = req.hosts ?? [...aggregate.hosts].sort();
    if (hosts.length === 0)
      throw new TaskRequestError(409, `aggregate ${req.aggregate} has no hosts`, [
        { path: 'aggregate', message: 'has no hosts', value: req.aggregate },
      ]);
    const malformed: InputIssue[] = [];
    hosts.forEach((h, i) => {
      if (hosts.indexOf(h) !== i) malformed.push({ path: `hosts[${i}]`, message: 'listed twice', value: h });
    });
    if (malformed.length > 0) throw new TaskRequestError(400, new InputError(malformed).message, malformed);

    const unknown: InputIssue[] = [];
    const conflicts: InputIssue[] = [];
    const services = await reader.nova.listServices('nova-compute');
    hosts.forEach((h, i) => {
      const path = `hosts[${i}]`;
      const svc = services.find((s) => s.host === h);
      if (!aggregate.hosts.includes(h))
        unknown.push({ path, message: `not in aggregate ${req.aggregate}`, value: h });
      else if (svc === undefined)
        unknown.push({ path, message: 'Nova has no nova-compute service on it', value: h });
      else if (svc.state !== 'up' || svc.forcedDown)
        conflicts.push({ path, message: 'nova-compute is down: an evacuation needs it up', value: h });
    });
    if (unknown.length > 0)
      throw new TaskRequestError(404, `${new InputError(unknown).message}; nothing was created`, unknown);
    if (conflicts.length > 0)
      throw new TaskRequestError(409, `${new InputError(conflicts).message}; nothing was created`, conflicts);

    // Each host alone must fit on the rest before anything is touched.
    const snapshot = await (this.deps.snapshot ?? (() => this.record()))();
    const policy = aggregateConfig(config, req.aggregate).policy;
    const mayStop = config.tasks.evacuate.mayStopMetadataKey;
    const refusals: InputIssue[] = [];
    hosts.forEach((h, i) => {
      let why: string | null;
      try {
        const v = drainVerdict(snapshot, policy, req.aggregate, [h], mayStop);
        why = v.ok ? null : v.reasons.join('; ');
      } catch (err) {
        if (!(err instanceof InputError)) throw err;
        why = err.message;
      }
      if (why !== null)
        refusals.push({
          path: `hosts[${i}]`,
          message: `the rest of ${req.aggregate} cannot take its servers: ${why}`,
          value: h,
        });
    });
    if (refusals.length > 0)
      throw new TaskRequestError(409, `${new InputError(refusals).message}; nothing was created`, refusals);

    const tasks = this.deps.tasks;
    const created = await tasks.decision(`maintenance:${by}`, async () => {
      const unfinished = await this.deps.campaigns.unfinished();
      const same = unfinished.find((c) => c.aggregate === req.aggregate);
      if (same !== undefined)
        throw new TaskRequestError(
          409,
          `aggregate ${req.aggregate} already has an unfinished campaign (${same.id}, ${same.state})`,
          [{ path: 'aggregate', message: `campaign ${same.id} is ${same.state}`, value: req.aggregate }],
        );
      const taken: InputIssue[] = [];
      hosts.forEach((h, i) => {
        const other = unfinished.find((c) => c.hosts.some((x) => x.host === h));
        if (other !== undefined)
          taken.push({ path: `hosts[${i}]`, message: `in unfinished campaign ${other.id}`, value: h });
      });
      if (taken.length > 0)
        throw new TaskRequestError(409, `${new InputError(taken).message}; nothing was created`, taken);
      const campaign = await this.deps.campaigns.create({
        aggregate: req.aggregate,
        requestedBy: by,
        requestedAt: this.now(),
        settings: { ...settings, parallel: Math.min(settings.parallel, hosts.length) },
        hosts: hosts.map(newHostProgress),
      });
      const [driver] = await tasks.insertPlanned(
        [{ kind: MAINTAIN_KIND, args: { campaign: campaign.id }, hosts: [] }],
        by,
      );
      return (
        (await this.deps.campaigns.update(
          campaign.id,
          campaign.version,
          { taskId: driver?.id ?? null },
          this.now(),
        )) ?? campaign
      );
    });
    return created;
  }

  private async record(): Promise<Snapshot> {
    const r = await recordSnapshot(this.deps.reader, {
      source: 'aicerine maintenance start',
      neutron: 'never',
      historyDays: 1,
    });
    return r.snapshot;
  }

  private async existing(id: string): Promise<Campaign> {
    const c = await this.deps.campaigns.get(id);
    if (c === null) throw new TaskRequestError(404, `no maintenance campaign ${id}`);
    return c;
  }

  /** No host is taken out, validated or re-admitted until resumed; what runs finishes. */
  async pause(id: string, by: string): Promise<Campaign> {
    await this.existing(id);
    const at = this.now();
    const c = await mutateCampaign(this.deps.campaigns, id, this.now, (c) => {
      if (c.state !== 'RUNNING' || c.abortRequested)
        throw new TaskRequestError(
          409,
          `campaign ${id} is ${c.abortRequested ? 'being aborted' : c.state}, not RUNNING`,
        );
      return { state: 'PAUSED', note: `paused by ${by} at ${at}` };
    });
    return this.woken(c);
  }

  /**
   * A paused campaign runs again. A running one whose driver task ended (cancelled, failed) gets
   * a new driver; one whose driver runs is refused (409).
   */
  async resume(id: string, by: string): Promise<Campaign> {
    const before = await this.existing(id);
    if (before.state === 'RUNNING') {
      if (await this.driverAlive(before))
        throw new TaskRequestError(409, `campaign ${id} is RUNNING, not PAUSED`);
      return this.woken(await this.ensureDriver(before, by));
    }
    const c = await mutateCampaign(this.deps.campaigns, id, this.now, (x) => {
      if (x.state !== 'PAUSED') throw new TaskRequestError(409, `campaign ${id} is ${x.state}, not PAUSED`);
      return { state: 'RUNNING', note: null };
    });
    return this.woken(await this.ensureDriver(c, by));
  }

  /**
   * The driver cancels the child tasks that run and ends the campaign ABORTED; hosts are left as
   * they are (listed in the campaign).
   */
  async abort(id: string, by: string): Promise<Campaign> {
    await this.existing(id);
    const c = await mutateCampaign(this.deps.campaigns, id, this.now, (x) => {
      if (isFinalCampaignState(x.state))
        throw new TaskRequestError(409, `campaign ${id} already ended ${x.state}`);
      if (x.abortRequested) return null;
      return { abortRequested: true, note: `abort asked by ${by}` };
    });
    return this.woken(await this.ensureDriver(c, by));
  }

  /** The operator says a handed-over host is back: the campaign validates or re-admits it. */
  async done(host: string, by: string): Promise<Campaign> {
    const mine = (await this.deps.campaigns.unfinished()).filter((c) => c.hosts.some((h) => h.host === host));
    const c = mine.find((x) =>
      x.hosts.some((h) => h.host === host && (isInFlight(h.state) || h.state === 'pending')),
    );
    if (c === undefined)
      throw new TaskRequestError(404, `host ${host} is in no unfinished maintenance campaign waiting for it`);
    const at = this.now();
    const back = await mutateCampaign(this.deps.campaigns, c.id, this.now, (x) => {
      const h = x.hosts.find((y) => y.host === host);
      if (h === undefined) throw new TaskRequestError(404, `host ${host} left campaign ${c.id}`);
      if (h.state === 'returned' || h.state === 'validating')
        throw new TaskRequestError(409, `host ${host} is already back (${h.state}) in campaign ${x.id}`);
      if (h.state !== 'ready')
        throw new TaskRequestError(
          409,
          `host ${host} is not handed over yet (${h.state}) in campaign ${x.id}: nothing to be done with it yet`,
        );
      return {
        hosts: x.hosts.map((y) =>
          y.host === host
            ? { ...y, state: 'returned', returnedAt: at, returnedBy: by, note: `back (${by})` }
            : y,
        ),
      };
    });
    return this.woken(back);
  }

  /** The campaign's driver, when it runs in this process, makes its next pass now. */
  private woken(c: Campaign): Campaign {
    this.deps.wakeups.wake(c.id);
    return c;
  }

  private async driverAlive(c: Campaign): Promise<boolean> {
    if (c.taskId === null) return false;
    const t = await this.deps.tasks.get(c.taskId);
    return t !== null && !isFinalTaskState(t.state);
  }

  private async ensureDriver(c: Campaign, by: string): Promise<Campaign> {
    if (await this.driverAlive(c)) return c;
    const [driver] = await this.deps.tasks.createPlanned(
      [{ kind: MAINTAIN_KIND, args: { campaign: c.id }, hosts: [] }],
      by,
    );
    return mutateCampaign(this.deps.campaigns, c.id, this.now, () => ({ taskId: driver?.id ?? null }));
  }
}
