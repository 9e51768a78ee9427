// Executions as a live timeline: the latest ones with every move's progress, aborts and
// failures, and an abort button while one runs.
import { useState } from 'react';
import { ActionButton, withComment } from '../actions.js';
import { get } from '../api.js';
import { Timeline } from '../charts/Timeline.js';
import { time } from '../format.js';
import { usePoll } from '../poll.js';
import { Link } from '../router.js';
import { useCan } from '../session.js';
import type { Execution, ExecutionDetail, Page } from '../types.js';
import { Failure, Loading } from './common.js';

/** How many of the latest executions get their moves fetched (each is one more request a poll). */
const DETAILED = 5;

async function latest(): Promise<{ list: Execution[]; details: ExecutionDetail[] }> {
  const list = (await get<Page<Execution>>('/v1/executions?limit=50')).items;
  const details = await Promise.all(
    list.slice(0, DETAILED).map((e) => get<ExecutionDetail>(`/v1/executions/${encodeURIComponent(e.id)}`)),
  );
  return { list, details };
}

export function Executions(props: { id?: string }) {
  const id = props.id;
  const data = usePoll(`executions:${id ?? ''}`, async () =>
    id === undefined
      ? latest()
      : { list: [], details: [await get<ExecutionDetail>(`/v1/executions/${encodeURIComponent(id)}`)] },
  );
  if (data.error) return <Failure message={data.error} />;
  if (data.data === null) return <Loading />;
  const { list, details } = data.data;
  return (
    <div>
      {details.length === 0 && <p className="muted">No executions yet.</p>}
      {details.map((e) => (
        <ExecutionCard key={e.id} e={e} />
      ))}
      {list.length > DETAILED && (
        <section className="card">
          <h3>Earlier executions</h3>
          <table>
            <tbody>
              {list.slice(DETAILED).map((e) => (
                <tr key={e.id}>
                  <td>
                    <Link to={`/executions/${encodeURIComponent(e.id)}`}>{e.id.slice(0, 8)}</Link>
                  </td>
                  <td>{e.aggregate}</td>
                  <td className={`state ${e.state}`}>{e.state}</td>
                  <td>{time(e.startedAt)}</td>
                  <td>{time(e.endedAt)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </section>
      )}
    </div>
  );
}

function ExecutionCard(props: { e: ExecutionDetail }) {
  const { e } = props;
  const can = useCan();
  const [comment, setComment] = useState('');
  const count = (s: string) => e.moves.filter((m) => m.state === s).length;
  const done = count('completed') + count('failed') + count('skipped');
  const total = e.moves.length;
  // The service's clock may be virtual (the demo runs it sped up): the latest time it reported
  // stands for "now", not the browser's clock.
  const now = Math.max(
    Date.parse(e.startedAt),
    ...e.moves.flatMap((m) => [m.issuedAt, m.endedAt]).flatMap((t) => (t === null ? [] : [Date.parse(t)])),
  );
  return (
    <section
      className="card execution"
      aria-label={`execution ${e.id}`}
      data-execution={e.id}
      data-state={e.state}
    >
      <header>
        <h2>
          <Link to={`/executions/${encodeURIComponent(e.id)}`}>Execution {e.id.slice(0, 8)}</Link> ·{' '}
          {e.aggregate}
        </h2>
        <span className={`badge state ${e.state}`}>{e.state}</span>
        {e.planId && <Link to={`/plans/${e.planId}`}>plan #{e.planId}</Link>}
        <span className="spacer" />
        {e.state === 'running' && can('execution.abort') && (
          <>
            <input
              aria-label="abort comment"
              value={comment}
              onChange={(ev) => setComment(ev.target.value)}
              placeholder="why abort"
            />
            <ActionButton
              label="Abort"
              className="danger"
              path={`/v1/executions/${encodeURIComponent(e.id)}/abort`}
              body={() => withComment(comment)}
            />
          </>
        )}
      </header>
      <p className="progress">
        <progress max={Math.max(1, total)} value={done} /> {done} of {total} moves done: {count('completed')}{' '}
        completed, {count('failed')} failed, {count('skipped')} skipped
        {count('migrating') + count('issuing') > 0 && (
          <>, {count('migrating') + count('issuing')} in flight</>
        )}
        {count('aborting') > 0 && <>, {count('aborting')} aborting</>}. Started {time(e.startedAt)} by{' '}
        {e.startedBy}
        {e.endedAt && <>, ended {time(e.endedAt)}</>}.
      </p>
      <Timeline moves={e.moves} startedAt={e.startedAt} endedAt={e.endedAt} now={now} />
      {e.moves.some((m) => m.detail) && (
        <ul className="details">
          {e.moves
            .filter((m) => m.detail)
            .map((m) => (
              <li key={m.step} className={m.state}>
                step {m.step} ({m.state}): {m.detail}
              </li>
            ))}
        </ul>
      )}
    </section>
  );
}
