// Validates one compute host: boots a canary onto it while it is still disabled, logs in and
// runs the check, then enables it (passed, and asked to) or leaves it disabled with the reason
// (any failure). The canary is always deleted, and the host leaves the batch's aggregate and
// trait, whatever happened. A resumed run repeats the steps: each is idempotent, and a canary a
// stopped run left behind is deleted before a new one boots.
//
// How the canary gets onto a disabled host (Nova Zed, checked against the lab): the scheduler
// forbids COMPUTE_STATUS_DISABLED on every request (the compute_status_filter request filter)
// and ComputeFilter rejects disabled services. A forced host (`availability_zone: "az:host"`)
// skips the filters (`host` at 2.74 does not), and the trait is taken off the host's provider
// for the moment of the boot: other requests still meet ComputeFilter, so nothing else lands.
// The batch's private flavor requires the batch's custom trait, which only the hosts under
// validation carry, so the canary cannot be placed anywhere else; the batch's aggregate holds
// the host with `filter_tenant_id` and the required trait in its metadata, for clouds that
// enable tenant isolation (AggregateMultiTenancyIsolation, isolate_aggregates).
import { CloudError } from '../cloud/errors.js';
import type { CloudSession } from '../cloud/session.js';
import { COMPUTE_STATUS_DISABLED, type ValidationCloud } from './cloud.js';
import { type BatchNames, batchNames, disabledReason } from './names.js';
import type { ValidationSettings } from './settings.js';
import { describeSshOutcome, runOverSsh, type SshOutcome } from './ssh.js';

export interface HostCheckpoint {
  /** The service as it was before the validation changed it. */
  prior: { status: 'enabled' | 'disabled'; reason: string | null };
  serverId: string | null;
}

export interface HostValidationResult {
  host: string;
  passed: boolean;
  /** "check passed", or why the host failed. */
  reason: string;
  /** The service status the validation left. */
  serviceStatus: 'enabled' | 'disabled';
  disabledReason: string | null;
  canary: { id: string | null; deleted: boolean };
  check: { exitCode: number; stdout: string; stderr: string } | null;
}

export interface ValidateHostDeps {
  cloud: ValidationCloud;
  settings: ValidationSettings;
  now(): number;
  sleep(ms: number): Promise<void>;
  /** Between status reads (boot, deletion) and SSH attempts. */
  pollMs?: number;
  signal?: AbortSignal;
  progress?(detail: string): Promise<void>;
  checkpoint: { load(): HostCheckpoint | null; save(c: HostCheckpoint): Promise<void> };
  /** Opens the session scoped to the dedicated project (default: ValidationCloud.projectSession). */
  projectSession?(projectId: string): Promise<CloudSession>;
}

/** A failure that decides the outcome (the host stays disabled); not a bug in Aicerine. */
class HostFailed extends Error {}

/** Boots of one canary when nova-compute's provider refresh races the lift of its trait. */
const BOOT_ATTEMPTS = 3;

const message = (e: unknown) => (e instanceof Error ? e.message : String(e));

function sshAddress(template: string, host: string, addresses: string[]): string | null {
  if (template.includes('{address}') && addresses.length === 0) return null;
  return template.replaceAll('{address}', addresses[0] ?? '').replaceAll('{host}', host);
}

export async function validateHost(
  deps: ValidateHostDeps,
  input: { batch: string; host: string; keepEnabled: boolean },
): Promise<HostValidationResult> {
  const { cloud, settings: s } = deps;
  const { host } = input;
  const pollMs = deps.pollMs ?? 2000;
  const step = async (detail: string) => {
    deps.signal?.throwIfAborted();
    await deps.progress?.(detail);
  };
  const names = batchNames(s, input.batch);

  const svc = await cloud.service(host);
  if (!svc) throw new CloudError('http', `Nova has no nova-compute service on host ${host} (any more)`);
  const saved = deps.checkpoint.load();
  const ckpt: HostCheckpoint = saved ?? {
    prior: { status: svc.status, reason: svc.disabledReason },
    serverId: null,
  };
  if (!saved) await deps.checkpoint.save(ckpt);
  if (svc.status === 'enabled') {
    await step(`disabling ${host} for its validation`);
    await cloud.setServiceStatus(
      svc.id,
      'disabled',
      disabledReason(`validation running (batch ${input.batch})`),
    );
  }

  let failure: string | null = null;
  let outcome: SshOutcome | null = null;
  let serverId: string | null = ckpt.serverId;
  let deleted = false;
  let aggregateId: number | null = null;
  let rp: string | null = null;
  let projectId: string | null = null;
  try {
    await step('preparing the project, aggregate, trait and flavor of the batch');
    projectId = await cloud.ensureProject(names.project, `aicerine validate-compute batch ${input.batch}`);
    await cloud.grantRole(projectId, s.role);
    await cloud.ensureTrait(names.trait);
    const agg = await cloud.ensureAggregate(names.aggregate, {
      filter_tenant_id: projectId,
      [`trait:${names.trait}`]: 'required',
    });
    aggregateId = agg.id;
    await cloud.addAggregateHost(agg.id, host);
    rp = await cloud.providerOfHost(host);
    await cloud.changeProviderTraits(rp, [names.trait], []);
    const size = await cloud.flavorSize(s.flavor);
    if (!size) throw new HostFailed(`the configured flavor ${s.flavor} does not exist`);
    const flavor = await cloud.ensureFlavor(names.flavor, size, projectId, names.trait);
    const imageId = await cloud.imageId(s.image);
    if (!imageId) throw new HostFailed(`the configured image ${s.image} does not exist`);

    await step(`removing any canary of ${host} an earlier run left`);
    const leftovers = (await cloud.projectServers(projectId)).filter(
      (x) => x.name === names.canary(host) || x.id === serverId,
    );
    for (const x of leftovers) await deleteAndWait(deps, x.id, pollMs);
    serverId = null;

    await step(`booting the canary onto ${host}`);
    const project = await (deps.projectSession ?? ((id) => cloud.projectSession(id)))(projectId);
    const booted = await bootOnDisabledHost(deps, project, names, {
      host,
      zone: svc.zone || 'nova',
      rp,
      imageId,
      flavorId: flavor.id,
      pollMs,
      onCreated: async (id) => {
        serverId = id;
        await deps.checkpoint.save({ ...ckpt, serverId: id });
      },
    });
    if (booted.host !== host)
      throw new HostFailed(`the canary landed on ${booted.host ?? 'no host'}, not ${host}`);

    await step(`logging in to the canary of ${host} and running the check`);
    const addresses = await cloud.serverAddresses(booted.id);
    const address = sshAddress(s.ssh.address, host, addresses);
    if (!address) {
      throw new HostFailed(
        'the canary has no address to SSH to: attach it to a network (tasks.validation.network) or set tasks.validation.ssh.address',
      );
    }
    outcome = await checkOverSsh(deps, address, pollMs);
    if (!(outcome.kind === 'exited' && outcome.exitCode === 0)) failure = describeSshOutcome(outcome);
  } catch (e) {
    if (deps.signal?.aborted) throw e;
    failure = e instanceof HostFailed ? e.message : `validation could not run: ${message(e)}`;
  } finally {
    // Runs after an abort too: the canary never outlives its run when it can be helped.
    const cleanup = async () => {
      if (serverId) {
        await deleteAndWait(deps, serverId, pollMs);
        deleted = true;
      } else deleted = true;
      if (aggregateId !== null) await cloud.removeAggregateHost(aggregateId, host);
      if (rp) await cloud.changeProviderTraits(rp, [], [names.trait]);
    };
    try {
      await cleanup();
    } catch (e) {
      if (!deps.signal?.aborted)
        failure ??= `the canary or the host's batch membership could not be removed: ${message(e)}`;
    }
  }

  // The decision: only a full pass enables; anything else leaves the host disabled, with why.
  let serviceStatus: 'enabled' | 'disabled';
  let reason: string | null;
  if (failure === null) {
    if (input.keepEnabled || ckpt.prior.status === 'enabled') {
      await cloud.setServiceStatus(svc.id, 'enabled');
      serviceStatus = 'enabled';
      reason = null;
    } else {
      // Passed but not asked to enable: the host stays as the operator left it.
      const now = await cloud.service(host);
      serviceStatus = 'disabled';
      reason = now?.disabledReason ?? null;
    }
  } else {
    reason = disabledReason(`failed: ${failure}`);
    await cloud.setServiceStatus(svc.id, 'disabled', reason);
    serviceStatus = 'disabled';
  }
  return {
    host,
    passed: failure === null,
    reason: failure ?? 'check passed',
    serviceStatus,
    disabledReason: reason,
    canary: { id: serverId, deleted },
    check:
      outcome?.kind === 'exited'
        ? { exitCode: outcome.exitCode, stdout: outcome.stdout, stderr: outcome.stderr }
        : null,
  };
}

async function deleteAndWait(deps: ValidateHostDeps, id: string, pollMs: number): Promise<void> {
  await deps.cloud.deleteServer(id);
  const deadline = deps.now() + deps.settings.bootTimeoutMs;
  for (;;) {
    const x = await deps.cloud.getServer(id);
    if (!x || x.status === 'DELETED') return;
    if (x.status === 'ERROR' && x.taskState === null) await deps.cloud.deleteServer(id);
    if (deps.now() > deadline) {
      throw new CloudError(
        'timeout',
        `canary ${id} still exists ${Math.round(deps.settings.bootTimeoutMs / 1000)} s after its deletion`,
      );
    }
    await deps.sleep(pollMs);
  }
}

async function bootOnDisabledHost(
  deps: ValidateHostDeps,
  project: CloudSession,
  names: BatchNames,
  b: {
    host: string;
    zone: string;
    rp: string;
    imageId: string;
    flavorId: string;
    pollMs: number;
    onCreated(id: string): Promise<void>;
  },
): Promise<{ id: string; host: string | null }> {
  const { cloud, settings: s } = deps;
  let lifted = await cloud.changeProviderTraits(b.rp, [], [COMPUTE_STATUS_DISABLED]);
  try {
    for (let attempt = 1; ; attempt++) {
      const id = await cloud.bootCanary(project, {
        name: names.canary(b.host),
        imageId: b.imageId,
        flavorId: b.flavorId,
        network: s.network,
        keyPair: s.keyPair,
        zone: b.zone,
        host: b.host,
      });
      await b.onCreated(id);
      const booted = await waitForBoot(deps, id, b.pollMs);
      if (booted.status === 'ACTIVE') return { id, host: booted.host };
      // nova-compute's periodic provider refresh puts the trait back on a disabled service's
      // provider; when it did so between the lift and the scheduler's Placement query, the boot
      // failed for that alone: lift it again and boot a new canary.
      const raced = await cloud.changeProviderTraits(b.rp, [], [COMPUTE_STATUS_DISABLED]);
      lifted ||= raced;
      if (!raced || attempt >= BOOT_ATTEMPTS) {
        const again = attempt > 1 ? ` (attempt ${attempt} of ${BOOT_ATTEMPTS})` : '';
        throw new HostFailed(`the canary went to ERROR${again}: ${booted.fault}`);
      }
      await deleteAndWait(deps, id, b.pollMs);
    }
  } finally {
    // Give the provider its trait back while the service is still disabled (nova-compute would
    // only restore it at its next provider-tree refresh).
    if (lifted) {
      const svc = await cloud.service(b.host);
      if (svc?.status === 'disabled') await cloud.changeProviderTraits(b.rp, [COMPUTE_STATUS_DISABLED], []);
    }
  }
}

/** Tries to log in until sshTimeout (a booting guest starts its SSH server late), then runs once. */
async function checkOverSsh(deps: ValidateHostDeps, address: string, pollMs: number): Promise<SshOutcome> {
  const s = deps.settings;
  const deadline = deps.now() + s.sshTimeoutMs;
  for (;;) {
    const o = await runOverSsh({
      target: { host: address, port: s.ssh.port, user: s.ssh.user, privateKeyFile: s.ssh.privateKeyFile },
      jump: s.ssh.jump,
      command: s.check,
      timeoutMs: s.checkTimeoutMs,
    });
    const notUpYet = o.kind === 'failed' && (o.stage === 'connect' || o.stage === 'jump');
    if (!notUpYet || deps.now() + pollMs > deadline) return o;
    deps.signal?.throwIfAborted();
    await deps.sleep(pollMs);
  }
}

/** Polls the canary until it is ACTIVE or in ERROR (with Nova's fault); throws on a timeout. */
async function waitForBoot(
  deps: ValidateHostDeps,
  id: string,
  pollMs: number,
): Promise<{ status: 'ACTIVE'; host: string | null } | { status: 'ERROR'; fault: string }> {
  const deadline = deps.now() + deps.settings.bootTimeoutMs;
  for (;;) {
    const x = await deps.cloud.getServer(id);
    if (!x) throw new HostFailed(`the canary ${id} disappeared while booting`);
    if (x.status === 'ACTIVE') return { status: 'ACTIVE', host: x.host };
    if (x.status === 'ERROR') return { status: 'ERROR', fault: x.fault?.trim() || 'Nova recorded no fault' };
    if (deps.now() > deadline) {
      throw new HostFailed(
        `the canary was not ACTIVE within ${Math.round(deps.settings.bootTimeoutMs / 1000)} s (status ${x.status}, task ${x.taskState ?? 'none'})`,
      );
    }
    deps.signal?.throwIfAborted();
    await deps.sleep(pollMs);
  }
}
