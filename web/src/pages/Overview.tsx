// Per aggregate: mode, pause, window, data health, the imbalance over time, the host heatmap and
// the latest plan, all polled.

import { ActionButton } from '../actions.js';
import { get, query } from '../api.js';
import { Heatmap } from '../charts/Heatmap.js';
import { LineChart } from '../charts/LineChart.js';
import { time } from '../format.js';
import { usePoll } from '../poll.js';
import { Link } from '../router.js';
import { useCan } from '../session.js';
import type { Aggregate, HistoryPoint, HostsPage, Page } from '../types.js';
import { Failure, Loading } from './common.js';
import { ForecastPeaks, ForecastSummary } from './Forecast.js';

export function Overview(props: { only?: string }) {
  const list = usePoll('aggregates', () => get<Page<Aggregate>>('/v1/aggregates?limit=1000'));
  if (list.error) return <Failure message={list.error} />;
  if (list.data === null) return <Loading />;
  const items = list.data.items.filter((a) => props.only === undefined || a.name === props.only);
  if (items.length === 0)
    return (
      <p>{props.only ? `No aggregate ${props.only} in the configuration.` : 'No aggregates configured.'}</p>
    );
  return (
    <div className="aggregates">
      {items.map((a) => (
        <AggregateCard key={a.name} aggregate={a} />
      ))}
    </div>
  );
}

function WindowState(props: { w: Aggregate['window'] }) {
  const { w } = props;
  if (w.open)
    return <span className="badge ok">window open{w.closesAt ? ` until ${time(w.closesAt)}` : ''}</span>;
  return <span className="badge">window closed{w.nextOpensAt ? `, opens ${time(w.nextOpensAt)}` : ''}</span>;
}

function AggregateCard(props: { aggregate: Aggregate }) {
  const a = props.aggregate;
  const can = useCan();
  const enc = encodeURIComponent(a.name);
  const hosts = usePoll(`hosts:${a.name}`, () => get<HostsPage>(`/v1/aggregates/${enc}/hosts?limit=1000`));
  const history = usePoll(`history:${a.name}`, () =>
    get<Page<HistoryPoint>>(`/v1/aggregates/${enc}/history${query({ limit: 200 })}`),
  );
  const plan = a.latestPlan;
  const latest = history.data?.items[0];
  return (
    <section className="card aggregate" aria-label={`aggregate ${a.name}`} data-aggregate={a.name}>
      <header>
        <h2>
          <Link to={`/aggregates/${enc}`}>{a.name}</Link>
        </h2>
        <span className={`badge mode ${a.mode}`}>{a.mode}</span>
        {a.paused && <span className="badge warn">paused</span>}
        <WindowState w={a.window} />
        {a.owner && (
          <span className="badge owner" data-testid="owner" title={`fence ${a.owner.fence}`}>
            replica {a.owner.replica}
          </span>
        )}
        {a.dataHealth && (
          <span
            className={`badge ${a.dataHealth.verdict === 'ok' ? 'ok' : 'warn'}`}
            title={a.dataHealth.reasons.join('; ')}
          >
            data {a.dataHealth.verdict}
          </span>
        )}
        <span className="spacer" />
        {a.paused
          ? can('resume') && <ActionButton label="Resume" path={`/v1/aggregates/${enc}/resume`} />
          : can('pause') && <ActionButton label="Pause" path={`/v1/aggregates/${enc}/pause`} />}
      </header>
      <div className="latest-plan">
        {plan ? (
          <>
            Latest plan <Link to={`/plans/${plan.id}`}>#{plan.id}</Link>: {plan.moveCount} moves,{' '}
            <span className={`status ${plan.status}`}>{plan.status}</span>, made {time(plan.createdAt)}
            {latest?.unchanged === true && latest.planId === plan.id && (
              // The loop kept it: nothing it plans from has changed since (docs/control-loop.md).
              <span data-testid="unchanged"> · unchanged since, checked {time(latest.at)}</span>
            )}
            {a.imbalance && <> · imbalance {a.imbalance.overall.toFixed(3)}</>}
          </>
        ) : (
          'No plan yet.'
        )}
      </div>
      <ForecastSummary forecast={a.forecast} />
      <div className="grid2">
        <div>
          <h3>Host utilization</h3>
          {hosts.error ? (
            <Failure message={hosts.error} />
          ) : hosts.data === null ? (
            <Loading />
          ) : (
            <>
              <Heatmap
                hosts={hosts.data.items}
                dimensions={hosts.data.dimensions}
                title={`utilization per host of ${a.name}`}
              />
              <p className="muted">as of {time(hosts.data.asOf)}</p>
              <ForecastPeaks hosts={hosts.data.items} aggregate={a.name} />
            </>
          )}
        </div>
        <div>
          <h3>Imbalance over time</h3>
          {history.error ? (
            <Failure message={history.error} />
          ) : history.data === null ? (
            <Loading />
          ) : (
            <LineChart
              points={history.data.items.map((p) => ({ at: p.at, value: p.imbalance }))}
              title={`imbalance of ${a.name}`}
            />
          )}
        </div>
      </div>
    </section>
  );
}
