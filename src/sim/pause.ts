// Pause and unpause, as Nova's API takes them: the state checks at once, then the compute
// manager switches the guest a moment later (task_state pausing/unpausing in between).
import { type SimCloud, SimError, type SimServer } from './model.js';

type PauseAction = 'pause' | 'unpause';

const NEEDS: Record<PauseAction, { vmState: string; task: string; to: 'paused' | 'active' }> = {
  pause: { vmState: 'active', task: 'pausing', to: 'paused' },
  unpause: { vmState: 'paused', task: 'unpausing', to: 'active' },
};

/** POST /servers/{id}/action {"pause": null} or {"unpause": null}. */
export function pauseOrUnpause(cloud: SimCloud, s: SimServer, action: PauseAction): void {
  cloud.sync();
  const need = NEEDS[action];
  if (s.taskState !== null) {
    throw new SimError(409, `Cannot '${action}' instance ${s.uuid} while it is in task_state ${s.taskState}`);
  }
  if (s.vmState !== need.vmState) {
    throw new SimError(409, `Cannot '${action}' instance ${s.uuid} while it is in vm_state ${s.vmState}`);
  }
  s.taskState = need.task;
  s.updatedMs = cloud.nowMs();
  cloud.at(cloud.nowMs() + cloud.timing.pauseSeconds * 1000, () => {
    if (s.taskState !== need.task) return;
    s.vmState = need.to;
    s.powerState = need.to === 'paused' ? 3 : 1;
    s.status = need.to === 'paused' ? 'PAUSED' : 'ACTIVE';
    s.taskState = null;
    s.updatedMs = cloud.nowMs();
  });
}
