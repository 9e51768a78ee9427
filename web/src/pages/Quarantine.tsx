// Servers the executor stopped moving (a failed migration, a Nova fault), and their release.
import { useState } from 'react';
import { ActionButton, withComment } from '../actions.js';
import { get } from '../api.js';
import { time } from '../format.js';
import { usePoll } from '../poll.js';
import { useCan } from '../session.js';
import type { Page, QuarantineEntry } from '../types.js';
import { Failure, Loading } from './common.js';

export function Quarantine() {
  const [state, setState] = useState<'active' | 'all'>('active');
  const list = usePoll(`quarantine:${state}`, () =>
    get<Page<QuarantineEntry>>(`/v1/quarantine?state=${state}&limit=500`),
  );
  return (
    <section className="card">
      <header>
        <h2>Quarantined servers</h2>
        <label className="inline">
          <input
            type="checkbox"
            checked={state === 'all'}
            onChange={(e) => setState(e.target.checked ? 'all' : 'active')}
          />{' '}
          show released
        </label>
      </header>
      {list.error ? (
        <Failure message={list.error} />
      ) : list.data === null ? (
        <Loading />
      ) : list.data.items.length === 0 ? (
        <p className="muted">No server is quarantined.</p>
      ) : (
        <table>
          <thead>
            <tr>
              <th>server</th>
              <th>aggregate</th>
              <th>reason</th>
              <th>Nova fault</th>
              <th>since</th>
              <th>attempts</th>
              <th>released</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {list.data.items.map((q) => (
              <QuarantineRow key={q.id} q={q} />
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

function QuarantineRow(props: { q: QuarantineEntry }) {
  const { q } = props;
  const can = useCan();
  const [comment, setComment] = useState('');
  return (
    <tr data-server={q.serverId}>
      <td>{q.serverId}</td>
      <td>{q.aggregate}</td>
      <td>{q.reason}</td>
      <td>{q.novaFault ?? '-'}</td>
      <td>{time(q.since)}</td>
      <td>{q.attempts}</td>
      <td>{q.releasedAt ? `${time(q.releasedAt)} by ${q.releasedBy ?? '?'}` : '-'}</td>
      <td>
        {q.releasedAt === null && can('quarantine.release') && (
          <>
            <input
              aria-label={`comment on releasing ${q.serverId}`}
              value={comment}
              onChange={(e) => setComment(e.target.value)}
              placeholder="comment"
            />
            <ActionButton
              label="Release"
              path={`/v1/quarantine/${encodeURIComponent(q.serverId)}/release`}
              body={() => withComment(comment)}
            />
          </>
        )}
      </td>
    </tr>
  );
}
