// Rolling maintenance (docs/maintenance.md): the campaigns, a form to start one, and a campaign's
// hosts with their step, servers moved, timings and what each waits for; pause, resume, abort,
// and "back from maintenance" for a host handed over. Buttons show only for the caller's roles.
import { useState } from 'react';
import { ActionButton } from '../actions.js';
import { ApiFailure, get, post } from '../api.js';
import { time } from '../format.js';
import { refreshAll, usePoll } from '../poll.js';
import { Link, navigate } from '../router.js';
import { useCan } from '../session.js';
import type { Campaign, CampaignHost, Page } from '../types.js';
import { Failure, Loading } from './common.js';

const IN_FLIGHT = new Set(['draining', 'ready', 'returned', 'validating']);
const FAILED = new Set(['refused', 'not-drained', 'drain-failed', 'failed-validation', 'aborted']);

function span(from: string | null, to: string | null): string {
  if (from === null || to === null) return '-';
  const s = Math.max(0, Math.round((Date.parse(to) - Date.parse(from)) / 1000));
  return s >= 60 ? `${Math.floor(s / 60)} min ${s % 60} s` : `${s} s`;
}

function counts(c: Campaign): string {
  const by = new Map<string, number>();
  for (const h of c.hosts) by.set(h.state, (by.get(h.state) ?? 0) + 1);
  return [...by].map(([s, n]) => `${n} ${s}`).join(', ');
}

export function Maintenance(props: { id?: string }) {
  if (props.id !== undefined) return <CampaignDetail id={props.id} />;
  return <CampaignList />;
}

function CampaignList() {
  const can = useCan();
  const list = usePoll('maintenance', () => get<Page<Campaign>>('/v1/maintenance?limit=100'));
  return (
    <>
      {can('maintenance.start') && <StartForm />}
      <section className="card">
        <header>
          <h2>Maintenance campaigns</h2>
        </header>
        {list.error ? (
          <Failure message={list.error} />
        ) : list.data === null ? (
          <Loading />
        ) : list.data.items.length === 0 ? (
          <p className="muted">No maintenance campaign yet.</p>
        ) : (
          <table>
            <thead>
              <tr>
                <th>campaign</th>
                <th>aggregate</th>
                <th>state</th>
                <th>hosts</th>
                <th>requested</th>
                <th>note</th>
              </tr>
            </thead>
            <tbody>
              {list.data.items.map((c) => (
                <tr key={c.id} data-campaign={c.id}>
                  <td>
                    <Link to={`/maintenance/${encodeURIComponent(c.id)}`}>{c.id}</Link>
                  </td>
                  <td>{c.aggregate}</td>
                  <td className={`state ${c.state}`}>{c.state}</td>
                  <td>{counts(c)}</td>
                  <td>
                    {time(c.requestedAt)} by {c.requestedBy.replace(/^operator:/, '')}
                  </td>
                  <td>{c.note ?? ''}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>
    </>
  );
}

function StartForm() {
  const [aggregate, setAggregate] = useState('');
  const [hosts, setHosts] = useState('');
  const [parallel, setParallel] = useState('1');
  const [validate, setValidate] = useState(false);
  const [returnWhen, setReturnWhen] = useState<'done' | 'service-restart'>('done');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const start = async () => {
    setBusy(true);
    setError(null);
    try {
      const list = hosts
        .split(/[\s,]+/)
        .map((h) => h.trim())
        .filter((h) => h !== '');
      const c = await post<Campaign>('/v1/maintenance', {
        aggregate: aggregate.trim(),
        ...(list.length > 0 ? { hosts: list } : {}),
        parallel: Number(parallel),
        validate,
        returnWhen,
      });
      refreshAll();
      navigate(`/maintenance/${encodeURIComponent(c.id)}`);
    } catch (e) {
      setError(e instanceof ApiFailure || e instanceof Error ? e.message : String(e));
    } finally {
      setBusy(false);
    }
  };
  return (
    <section className="card">
      <header>
        <h2>Start a campaign</h2>
      </header>
      <p className="muted">
        Each host is checked first: the rest of the aggregate must take its servers. Nothing is touched when a
        check fails.
      </p>
      <form
        className="start-maintenance"
        onSubmit={(e) => {
          e.preventDefault();
          void start();
        }}
      >
        <label>
          aggregate <input value={aggregate} onChange={(e) => setAggregate(e.target.value)} required />
        </label>
        <label>
          hosts{' '}
          <input
            value={hosts}
            onChange={(e) => setHosts(e.target.value)}
            placeholder="all, by name; or h1, h2, ..."
          />
        </label>
        <label>
          at a time{' '}
          <input
            type="number"
            min={1}
            value={parallel}
            onChange={(e) => setParallel(e.target.value)}
            style={{ width: '4em' }}
          />
        </label>
        <label>
          <input type="checkbox" checked={validate} onChange={(e) => setValidate(e.target.checked)} />{' '}
          validate before re-admitting
        </label>
        <label>
          back when{' '}
          <select
            value={returnWhen}
            onChange={(e) => setReturnWhen(e.target.value === 'service-restart' ? 'service-restart' : 'done')}
          >
            <option value="done">the operator says done</option>
            <option value="service-restart">nova-compute restarts</option>
          </select>
        </label>
        <button type="submit" disabled={busy || aggregate.trim() === ''}>
          Start
        </button>
      </form>
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
    </section>
  );
}

function CampaignDetail(props: { id: string }) {
  const can = useCan();
  const c = usePoll(`maintenance:${props.id}`, () =>
    get<Campaign>(`/v1/maintenance/${encodeURIComponent(props.id)}`),
  );
  if (c.error) return <Failure message={c.error} />;
  if (c.data === null) return <Loading />;
  const m = c.data;
  const base = `/v1/maintenance/${encodeURIComponent(m.id)}`;
  const open = m.state === 'RUNNING' || m.state === 'PAUSED';
  return (
    <section className="card" data-campaign={m.id}>
      <header>
        <h2>
          Campaign {m.id}: {m.aggregate}{' '}
          <span className={`state ${m.state}`} data-testid="campaign-state">
            {m.state}
            {m.abortRequested && m.state !== 'ABORTED' ? ' (aborting)' : ''}
          </span>
        </h2>
        <span>
          {can('maintenance.control') && m.state === 'RUNNING' && !m.abortRequested && (
            <ActionButton label="Pause" path={`${base}/pause`} />
          )}
          {can('maintenance.control') && m.state === 'PAUSED' && !m.abortRequested && (
            <ActionButton label="Resume" path={`${base}/resume`} />
          )}
          {can('maintenance.control') && open && !m.abortRequested && (
            <ActionButton label="Abort" className="danger" path={`${base}/abort`} />
          )}
        </span>
      </header>
      <p>
        {m.settings.parallel} at a time, {m.settings.validate ? 'validated' : 'not validated'} before
        re-admission, back when{' '}
        {m.settings.returnWhen === 'done' ? 'the operator says done' : 'nova-compute restarts'}. Requested{' '}
        {time(m.requestedAt)} by {m.requestedBy.replace(/^operator:/, '')}
        {m.endedAt ? `; ended ${time(m.endedAt)}` : ''}. <Link to="/maintenance">All campaigns</Link>
      </p>
      {m.note && <p className="muted">{m.note}</p>}
      {open && (m.driver === null || m.driver.state === 'DONE' || m.driver.state === 'ERROR') && (
        <p role="alert" className="error">
          Its driver task {m.taskId ?? ''}{' '}
          {m.driver === null
            ? 'is gone'
            : `ended ${m.driver.state}${m.driver.error ? ` (${m.driver.error})` : ''}`}
          : nothing moves until it is resumed.
        </p>
      )}
      <table>
        <thead>
          <tr>
            <th>host</th>
            <th>step</th>
            <th>moved</th>
            <th>drain</th>
            <th>handed over</th>
            <th>away</th>
            <th>re-admission</th>
            <th>note</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {m.hosts.map((h) => (
            <HostRow key={h.host} h={h} canControl={can('maintenance.control') && open} />
          ))}
        </tbody>
      </table>
    </section>
  );
}

function HostRow(props: { h: CampaignHost; canControl: boolean }) {
  const { h } = props;
  const kind = FAILED.has(h.state) ? 'failed' : IN_FLIGHT.has(h.state) ? 'running' : h.state;
  return (
    <tr data-host={h.host}>
      <td>{h.host}</td>
      <td className={`state ${kind}`}>{h.state === 'ready' ? 'ready for maintenance' : h.state}</td>
      <td>{h.startedAt === null ? '-' : `${h.moved.live} live, ${h.moved.cold} cold`}</td>
      <td>{span(h.startedAt, h.drainedAt)}</td>
      <td>{time(h.handedOverAt)}</td>
      <td>{span(h.handedOverAt, h.returnedAt)}</td>
      <td>{span(h.returnedAt, h.endedAt)}</td>
      <td>
        {h.note ?? ''}
        {h.cannotMove.length > 0 && (
          <ul>
            {h.cannotMove.map((u) => (
              <li key={u.server}>
                {u.name || u.server}: {u.why}
              </li>
            ))}
          </ul>
        )}
      </td>
      <td>
        {props.canControl && h.state === 'ready' && h.handedOverAt !== null && (
          <ActionButton
            label="Back from maintenance"
            path={`/v1/maintenance/hosts/${encodeURIComponent(h.host)}/done`}
          />
        )}
      </td>
    </tr>
  );
}
