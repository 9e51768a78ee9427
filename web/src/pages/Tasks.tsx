// Operator tasks (docs/tasks.md): the task table with live state and progress, the worker's health
// (a blocked worker says why), a form to request validate-compute, evacuate-compute and
// purge-project (a refusal names the field at fault), cancel and the clean-up of DONE tasks.
import { type FormEvent, useState } from 'react';
import { ActionButton } from '../actions.js';
import { ApiFailure, get, post, query } from '../api.js';
import { time } from '../format.js';
import { refreshAll, usePoll } from '../poll.js';
import { Link } from '../router.js';
import { useCan } from '../session.js';
import type { Task, TaskCreateBody, TaskCreated, TaskKinds, TaskPage, TaskWorker } from '../types.js';
import { Failure, Loading } from './common.js';
import { argsText, resultSummary, TaskResult } from './TaskResults.js';

const STATES = ['SCHEDULED', 'WAITING', 'RUNNING', 'DONE', 'ERROR'] as const;
/** Tasks one list shows; DONE ones are purged after a day, so this is rarely reached. */
const LIST_LIMIT = 200;
const ended = (t: Task) => t.state === 'DONE' || t.state === 'ERROR';

export function Tasks() {
  const can = useCan();
  const [state, setState] = useState('');
  const list = usePoll(`tasks:${state}`, () =>
    get<TaskPage>(`/v1/tasks${query({ limit: LIST_LIMIT, state: state || undefined })}`),
  );
  return (
    <>
      {can('task.create') && <NewTask />}
      <section className="card" aria-label="tasks">
        <header>
          <h2>Operator tasks</h2>
          <label className="inline">
            state{' '}
            <select aria-label="state filter" value={state} onChange={(e) => setState(e.target.value)}>
              <option value="">all</option>
              {STATES.map((s) => (
                <option key={s}>{s}</option>
              ))}
            </select>
          </label>
          <span className="spacer" />
          {can('task.clean') && <CleanDone />}
        </header>
        {list.data && <WorkerStatus worker={list.data.worker} />}
        {list.error ? (
          <Failure message={list.error} />
        ) : list.data === null ? (
          <Loading />
        ) : list.data.items.length === 0 ? (
          <p className="muted">No task{state ? ` in state ${state}` : ''}.</p>
        ) : (
          <>
            <TaskTable tasks={list.data.items} />
            {list.data.nextCursor !== null && (
              <p className="muted">
                The newest {list.data.items.length} are shown; filter by state, or page with{' '}
                <code>aicerine tasks list --cursor</code>, for the others.
              </p>
            )}
          </>
        )}
      </section>
    </>
  );
}

function WorkerStatus(props: { worker: TaskWorker }) {
  const w = props.worker;
  if (w === null)
    return <p className="notice">No task worker runs in this service: tasks wait for one that does.</p>;
  if (w.blocked !== null)
    return (
      <p role="alert" className="error" data-testid="worker-blocked">
        The task worker touches no task{w.blockedSince ? ` since ${time(w.blockedSince)}` : ''}: {w.blocked}
      </p>
    );
  if (w.state !== 'running')
    return (
      <p className="notice" data-testid="worker-status">
        The task worker of this service is {w.state}: tasks wait for a worker that runs.
      </p>
    );
  return (
    <p className="muted" data-testid="worker-status">
      worker {w.state}
      {w.running.length > 0 ? `, running task ${w.running.join(', ')}` : ''}
    </p>
  );
}

function TaskTable(props: { tasks: Task[] }) {
  return (
    <table className="tasks">
      <thead>
        <tr>
          <th>id</th>
          <th>kind</th>
          <th>arguments</th>
          <th>asked by</th>
          <th>state</th>
          <th>progress</th>
          <th>result or error</th>
          <th>requested</th>
          <th>started</th>
          <th>ended</th>
          <th />
        </tr>
      </thead>
      <tbody>
        {props.tasks.map((t) => (
          <TaskRow key={t.id} task={t} />
        ))}
      </tbody>
    </table>
  );
}

function TaskRow(props: { task: Task }) {
  const t = props.task;
  return (
    <tr data-task={t.id} data-state={t.state}>
      <td>
        <Link to={`/tasks/${t.id}`}>{t.id}</Link>
      </td>
      <td>{t.kind}</td>
      <td>{argsText(t.args)}</td>
      <td>{t.requestedBy}</td>
      <td>
        <StateBadge task={t} />
      </td>
      <td>
        <Progress task={t} />
      </td>
      <td className={t.state === 'ERROR' ? 'error result' : 'result'}>{resultSummary(t)}</td>
      <td>{time(t.requestedAt)}</td>
      <td>{time(t.startedAt)}</td>
      <td>{time(t.endedAt)}</td>
      <td>
        <CancelButton task={t} />
      </td>
    </tr>
  );
}

function StateBadge(props: { task: Task }) {
  const t = props.task;
  return (
    <span className="task-state">
      <span
        className={`badge state-${t.state.toLowerCase()}`}
        data-testid="task-state"
        title={t.waitingReason ?? ''}
      >
        {t.state}
      </span>
      {t.state === 'WAITING' && t.waitingReason && <span className="muted"> {t.waitingReason}</span>}
      {t.cancelRequested && !ended(t) && <span className="notice"> cancelling</span>}
    </span>
  );
}

function Progress(props: { task: Task }) {
  const p = props.task.progress;
  // An ended task's counts say nothing its result does not: its last word only.
  if (ended(props.task)) return <span className="progress">{p.detail || '-'}</span>;
  return (
    <span className="progress">
      {p.total !== null && p.total > 0 ? (
        <progress value={p.done} max={p.total} />
      ) : (
        props.task.state === 'RUNNING' && <progress />
      )}{' '}
      {p.total !== null ? `${p.done}/${p.total}` : p.done > 0 ? String(p.done) : ''} {p.detail}
    </span>
  );
}

function CancelButton(props: { task: Task }) {
  const can = useCan();
  const t = props.task;
  if (ended(t) || t.cancelRequested || !can('task.cancel')) return null;
  return (
    <ActionButton label="Cancel" className="danger" path={`/v1/tasks/${encodeURIComponent(t.id)}/cancel`} />
  );
}

function CleanDone() {
  const [said, setSaid] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const clean = async () => {
    setBusy(true);
    setError(null);
    try {
      const r = await post<{ deleted: number }>('/v1/tasks/clean', {});
      setSaid(`removed ${r.deleted} DONE task${r.deleted === 1 ? '' : 's'}`);
      refreshAll();
    } catch (e) {
      setError(e instanceof Error ? e.message : String(e));
    } finally {
      setBusy(false);
    }
  };
  return (
    <span className="action">
      <button
        type="button"
        disabled={busy}
        onClick={() => void clean()}
        title="other states are never removed"
      >
        Remove DONE tasks
      </button>
      {said && <span className="muted">{said}</span>}
      {error && (
        <span role="alert" className="error">
          {error}
        </span>
      )}
    </span>
  );
}

// The request form. Each kind's arguments are fields of their own; a kind this dashboard does not
// know (one a deployment registered) takes its arguments as JSON.

type Kind = 'evacuate-compute' | 'purge-project' | 'validate-compute';
const KNOWN: Kind[] = ['evacuate-compute', 'purge-project', 'validate-compute'];

interface Fields {
  host: string;
  target: string;
  project: string;
  dryRun: boolean;
  hosts: string;
  keepEnabled: boolean;
  json: string;
}

function argsOf(kind: string, f: Fields): Record<string, unknown> {
  switch (kind) {
    case 'evacuate-compute':
      return { host: f.host.trim(), ...(f.target.trim() !== '' ? { target: f.target.trim() } : {}) };
    case 'purge-project':
      return { project: f.project.trim(), dryRun: f.dryRun };
    case 'validate-compute':
      return { hosts: f.hosts.split(/[\s,]+/).filter((h) => h !== ''), keepEnabled: f.keepEnabled };
    default: {
      const text = f.json.trim();
      if (text === '') return {};
      const parsed: unknown = JSON.parse(text);
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
        throw new Error('arguments: expected a JSON object');
      return parsed as Record<string, unknown>;
    }
  }
}

/** The form input a refusal's field points to: `body.args.hosts[1]` → hosts, `body.kind` → kind. */
function inputOf(field: string | null): string | null {
  if (field === null) return null;
  const m = /^body\.(?:args\.)?([A-Za-z]+)/.exec(field);
  return m?.[1] ?? 'json';
}

interface Refusal {
  status: number;
  code: string;
  message: string;
  field: string | null;
  value: unknown;
}

function NewTask() {
  const kinds = usePoll('tasks:kinds', () => get<TaskKinds>('/v1/tasks/kinds'), 30_000);
  const [kind, setKind] = useState<string>('evacuate-compute');
  const [f, setF] = useState<Fields>({
    host: '',
    target: '',
    project: '',
    dryRun: true,
    hosts: '',
    keepEnabled: false,
    json: '',
  });
  const [refusal, setRefusal] = useState<Refusal | null>(null);
  const [created, setCreated] = useState<Task[]>([]);
  const [busy, setBusy] = useState(false);
  const offered = kinds.data?.kinds ?? KNOWN.map((k) => ({ kind: k, description: '' }));
  const bad = inputOf(refusal?.field ?? null);

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setRefusal(null);
    let body: TaskCreateBody;
    try {
      body = { kind, args: argsOf(kind, f) };
    } catch (err) {
      setRefusal({
        status: 0,
        code: 'invalid-json',
        message: err instanceof Error ? err.message : String(err),
        field: 'body.args',
        value: f.json,
      });
      return;
    }
    setBusy(true);
    try {
      const r = await post<TaskCreated>('/v1/tasks', body);
      setCreated(r.tasks);
      refreshAll();
    } catch (err) {
      setCreated([]);
      setRefusal(
        err instanceof ApiFailure
          ? { status: err.status, code: err.code, message: err.message, field: err.field, value: err.value }
          : { status: 0, code: 'error', message: String(err), field: null, value: undefined },
      );
    } finally {
      setBusy(false);
    }
  };

  const set = <K extends keyof Fields>(key: K, value: Fields[K]) => setF({ ...f, [key]: value });
  const text = (key: 'host' | 'target' | 'project' | 'hosts', label: string, placeholder: string) => (
    <label>
      {label}
      <input
        name={key}
        value={f[key]}
        placeholder={placeholder}
        aria-invalid={bad === key}
        aria-describedby={bad === key ? 'task-refusal' : undefined}
        onChange={(e) => set(key, e.target.value)}
      />
    </label>
  );
  const description = offered.find((k) => k.kind === kind)?.description;

  return (
    <section className="card" aria-label="new task">
      <h2>Request a task</h2>
      <form className="task-form" aria-label="request a task" onSubmit={submit}>
        <label>
          Kind
          <select
            name="kind"
            value={kind}
            aria-invalid={bad === 'kind'}
            onChange={(e) => {
              setKind(e.target.value);
              setRefusal(null);
            }}
          >
            {offered.map((k) => (
              <option key={k.kind} value={k.kind}>
                {k.kind}
              </option>
            ))}
          </select>
        </label>
        {kind === 'evacuate-compute' && (
          <>
            {text('host', 'Host', 'compute5')}
            {text('target', 'Target (optional)', 'any suitable host')}
          </>
        )}
        {kind === 'purge-project' && (
          <>
            {text('project', 'Project (id or name)', 'old-project')}
            <label className="inline">
              <input
                type="checkbox"
                name="dryRun"
                checked={f.dryRun}
                onChange={(e) => set('dryRun', e.target.checked)}
              />{' '}
              dry run: only list what would be deleted
            </label>
          </>
        )}
        {kind === 'validate-compute' && (
          <>
            {text('hosts', 'Hosts (space or comma separated)', 'compute7 compute8')}
            <label className="inline">
              <input
                type="checkbox"
                name="keepEnabled"
                checked={f.keepEnabled}
                onChange={(e) => set('keepEnabled', e.target.checked)}
              />{' '}
              keep enabled when it passes
            </label>
          </>
        )}
        {!KNOWN.includes(kind as Kind) && (
          <label>
            Arguments (JSON)
            <textarea
              name="json"
              rows={2}
              value={f.json}
              aria-invalid={bad === 'json'}
              onChange={(e) => set('json', e.target.value)}
            />
          </label>
        )}
        <button
          type="submit"
          className={kind === 'purge-project' && !f.dryRun ? 'danger' : 'primary'}
          disabled={busy}
        >
          {kind === 'purge-project' && !f.dryRun ? 'Purge the project' : 'Request'}
        </button>
      </form>
      {description && <p className="muted">{description}</p>}
      {refusal && <RefusalNote refusal={refusal} />}
      {created.length > 0 && <Created tasks={created} />}
    </section>
  );
}

function RefusalNote(props: { refusal: Refusal }) {
  const r = props.refusal;
  return (
    <div role="alert" className="refusal error" id="task-refusal" data-status={r.status}>
      <strong>{r.status > 0 ? `Refused (${r.status} ${r.code})` : 'Not sent'}, nothing was created</strong>
      {r.field !== null && (
        <div data-testid="refusal-field">
          field <code>{r.field}</code>
          {r.value !== undefined && (
            <>
              {' '}
              = <code>{JSON.stringify(r.value)}</code>
            </>
          )}
        </div>
      )}
      <div className="message">{r.message}</div>
    </div>
  );
}

/** The tasks just created, live: a dry run's list appears here as soon as it is taken. */
function Created(props: { tasks: Task[] }) {
  return (
    <section className="created" aria-label="created tasks">
      {props.tasks.map((t) => (
        <CreatedTask key={t.id} first={t} />
      ))}
    </section>
  );
}

function CreatedTask(props: { first: Task }) {
  const live = usePoll(`task:${props.first.id}`, () =>
    get<Task>(`/v1/tasks/${encodeURIComponent(props.first.id)}`),
  );
  const t = live.data ?? props.first;
  return (
    <div className="created-task" data-task={t.id} data-state={t.state}>
      <p>
        Created <Link to={`/tasks/${t.id}`}>task {t.id}</Link>: {t.kind} {argsText(t.args)},{' '}
        <StateBadge task={t} /> <Progress task={t} />
      </p>
      {t.state === 'ERROR' && <Failure message={t.error ?? 'failed'} />}
      {ended(t) && <TaskResult task={t} />}
    </div>
  );
}

/** One task in full. */
export function TaskDetail(props: { id: string }) {
  const task = usePoll(`task:${props.id}`, () => get<Task>(`/v1/tasks/${encodeURIComponent(props.id)}`));
  if (task.error) return <Failure message={task.error} />;
  if (task.data === null) return <Loading />;
  const t = task.data;
  return (
    <section className="card" aria-label={`task ${t.id}`} data-task={t.id} data-state={t.state}>
      <header>
        <h2>
          Task {t.id}: {t.kind}
        </h2>
        <StateBadge task={t} />
        <span className="spacer" />
        <CancelButton task={t} />
      </header>
      <p>
        <Link to="/tasks">All tasks</Link>
      </p>
      <dl className="facts">
        <dt>arguments</dt>
        <dd>{argsText(t.args)}</dd>
        <dt>asked by</dt>
        <dd>
          {t.requestedBy} at {time(t.requestedAt)}
        </dd>
        <dt>hosts it locks</dt>
        <dd>{t.hosts.join(', ') || '-'}</dd>
        <dt>progress</dt>
        <dd>
          <Progress task={t} />
        </dd>
        <dt>worker</dt>
        <dd>
          {t.owner ?? '-'}
          {t.heartbeatAt ? `, last heartbeat ${time(t.heartbeatAt)}` : ''}, attempt {t.attempts}
        </dd>
        <dt>started, ended</dt>
        <dd>
          {time(t.startedAt)}, {time(t.endedAt)}
        </dd>
        <dt>batch</dt>
        <dd>
          <code>{t.batch}</code>
          {t.afterBatch ? ' (runs after the others of its batch)' : ''}
        </dd>
        {t.error && (
          <>
            <dt>error</dt>
            <dd className="error">{t.error}</dd>
          </>
        )}
      </dl>
      <TaskResult task={t} />
    </section>
  );
}
