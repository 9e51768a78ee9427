// What a task did, read from its result by kind: an evacuation's moves and what could not move, a
// purge's (or dry run's) items, a validation's verdict and check output. Anything else as JSON.
import type {
  BatchCleanupResult,
  EvacuateResult,
  HostValidationResult,
  PurgeItem,
  PurgeResult,
  Task,
} from '../types.js';

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

// The service writes these results (src/tasks/kinds, src/validation); the checks only tell the
// kinds apart and keep an unexpected shape from breaking the page (it is then shown as JSON).
function isEvacuation(r: unknown): r is EvacuateResult {
  return isObject(r) && Array.isArray(r.liveMigrated) && Array.isArray(r.cannotMove);
}
function isPurge(r: unknown): r is PurgeResult {
  return (
    isObject(r) && (Array.isArray(r.wouldDelete) || Array.isArray(r.deleted)) && Array.isArray(r.skipped)
  );
}
function isValidation(r: unknown): r is HostValidationResult {
  return isObject(r) && typeof r.passed === 'boolean' && typeof r.host === 'string';
}
function isCleanup(r: unknown): r is BatchCleanupResult {
  return isObject(r) && Array.isArray(r.servers) && isObject(r.trait);
}
const asEvacuation = (r: unknown) => (isEvacuation(r) ? r : null);
const asPurge = (r: unknown) => (isPurge(r) ? r : null);
const asValidation = (r: unknown) => (isValidation(r) ? r : null);
const asCleanup = (r: unknown) => (isCleanup(r) ? r : null);

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/** One line for the task list. */
export function resultSummary(t: Task): string {
  if (t.state === 'ERROR') return t.error ?? 'failed';
  if (t.result === null || t.result === undefined)
    return t.state === 'WAITING' ? (t.waitingReason ?? 'waiting') : '-';
  const ev = asEvacuation(t.result);
  if (ev)
    return `${ev.liveMigrated.length} live, ${ev.coldMigrated.length} cold, ${ev.cannotMove.length} cannot move`;
  const purge = asPurge(t.result);
  if (purge)
    return purge.dryRun
      ? `dry run: would delete ${plural(purge.wouldDelete.length, 'item')}`
      : `deleted ${plural(purge.deleted.length, 'item')}`;
  const v = asValidation(t.result);
  if (v) return `${v.passed ? 'passed' : 'failed'}: ${v.reason}; host ${v.serviceStatus}`;
  const c = asCleanup(t.result);
  if (c)
    return `removed ${plural(c.servers.length, 'server')}, ${c.aggregate ?? 'no'} aggregate, ${c.project ?? 'no'} project`;
  return JSON.stringify(t.result);
}

function PurgeItems(props: { items: PurgeItem[]; label: string }) {
  if (props.items.length === 0) return <p className="muted">Nothing.</p>;
  return (
    <table aria-label={props.label}>
      <thead>
        <tr>
          <th>kind</th>
          <th>name</th>
          <th>id</th>
        </tr>
      </thead>
      <tbody>
        {props.items.map((i) => (
          <tr key={`${i.kind}:${i.id}`} data-item={`${i.kind}:${i.id}`}>
            <td>{i.kind}</td>
            <td>{i.name || '-'}</td>
            <td>
              <code>{i.id}</code>
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function Servers(props: { rows: { server: string; name: string; detail: string }[]; label: string }) {
  if (props.rows.length === 0) return <p className="muted">None.</p>;
  return (
    <table aria-label={props.label}>
      <tbody>
        {props.rows.map((r) => (
          <tr key={r.server} data-server={r.server}>
            <td>{r.name || r.server}</td>
            <td>
              <code>{r.server}</code>
            </td>
            <td>{r.detail}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** The whole result, for a task's page (and under a dry run just asked for). */
export function TaskResult(props: { task: Task }) {
  const { result } = props.task;
  if (result === null || result === undefined) return null;
  const ev = asEvacuation(result);
  if (ev)
    return (
      <div className="task-result">
        <p>
          {ev.host} disabled: <q>{ev.disabledReason}</q>
        </p>
        <h3>Live-migrated ({ev.liveMigrated.length})</h3>
        <Servers label="live-migrated" rows={ev.liveMigrated.map((m) => ({ ...m, detail: `→ ${m.to}` }))} />
        <h3>Cold-migrated ({ev.coldMigrated.length})</h3>
        <Servers label="cold-migrated" rows={ev.coldMigrated.map((m) => ({ ...m, detail: `→ ${m.to}` }))} />
        <h3>Cannot move ({ev.cannotMove.length})</h3>
        <Servers label="cannot move" rows={ev.cannotMove.map((m) => ({ ...m, detail: m.why }))} />
      </div>
    );
  const purge = asPurge(result);
  if (purge)
    return (
      <div className="task-result">
        {purge.dryRun ? (
          <>
            <h3>Would delete ({purge.wouldDelete.length}), in this order</h3>
            <PurgeItems items={purge.wouldDelete} label="would delete" />
          </>
        ) : (
          <>
            <h3>Deleted ({purge.deleted.length})</h3>
            <PurgeItems items={purge.deleted} label="deleted" />
          </>
        )}
        {purge.skipped.length > 0 && (
          <>
            <h3>Left alone ({purge.skipped.length})</h3>
            <ul>
              {purge.skipped.map((s) => (
                <li key={s.what}>
                  {s.what}: {s.why}
                </li>
              ))}
            </ul>
          </>
        )}
      </div>
    );
  const v = asValidation(result);
  if (v)
    return (
      <div className="task-result">
        <p>
          <strong className={v.passed ? 'state completed' : 'state failed'}>
            {v.passed ? 'passed' : 'failed'}
          </strong>
          : {v.reason}. The host is {v.serviceStatus}
          {v.disabledReason ? ` (${v.disabledReason})` : ''}; the canary{' '}
          {v.canary.id === null ? 'was never created' : v.canary.deleted ? 'was removed' : 'is still there'}.
        </p>
        {v.check && (
          <>
            <h3>Check (exit {v.check.exitCode})</h3>
            <pre>{v.check.stdout}</pre>
            {v.check.stderr !== '' && <pre className="error">{v.check.stderr}</pre>}
          </>
        )}
      </div>
    );
  const c = asCleanup(result);
  if (c)
    return (
      <dl className="task-result facts">
        <dt>servers</dt>
        <dd>{c.servers.join(', ') || '-'}</dd>
        <dt>flavor</dt>
        <dd>{c.flavor ?? '-'}</dd>
        <dt>aggregate</dt>
        <dd>{c.aggregate ?? '-'}</dd>
        <dt>trait</dt>
        <dd>
          {c.trait.name} (removed from {c.trait.removedFrom.length} providers)
        </dd>
        <dt>project</dt>
        <dd>{c.project ?? '-'}</dd>
      </dl>
    );
  return <pre className="task-result">{JSON.stringify(result, null, 2)}</pre>;
}

/** `host=s2 target=-`; the project a purge resolved is shown by name after its reference. */
export function argsText(args: Record<string, unknown>): string {
  const shown = (v: unknown) => (Array.isArray(v) ? v.join(',') : v === null ? '-' : String(v));
  return Object.entries(args)
    .filter(([k]) => k !== 'projectId' && k !== 'projectName')
    .map(([k, v]) =>
      k === 'project' && typeof args.projectName === 'string' && args.projectName !== v
        ? `${k}=${shown(v)} (${args.projectName})`
        : `${k}=${shown(v)}`,
    )
    .join(' ');
}
