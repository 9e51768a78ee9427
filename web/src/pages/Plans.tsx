// Plans: the list, and one plan with its moves by wave, the before/after chart and the decisions
// operators take on the whole plan or on single moves.
import { useState } from 'react';
import { phaseLabel } from '../../../src/model/plan.js';
import { ActionButton, withComment } from '../actions.js';
import { get } from '../api.js';
import { BeforeAfter } from '../charts/BeforeAfter.js';
import { num, seconds, time } from '../format.js';
import { usePoll } from '../poll.js';
import { Link } from '../router.js';
import { useCan } from '../session.js';
import type { MoveDecision, Page, PlanHosts, PlanMove, PlanSummary, StoredPlan } from '../types.js';
import { Failure, HostsOutcome, Loading } from './common.js';

const OPEN = ['proposed', 'partially-approved', 'approved'];

export function PlanList() {
  const plans = usePoll('plans', () => get<Page<PlanSummary>>('/v1/plans?limit=50'));
  if (plans.error) return <Failure message={plans.error} />;
  if (plans.data === null) return <Loading />;
  return (
    <section className="card">
      <h2>Plans</h2>
      <table>
        <thead>
          <tr>
            <th>plan</th>
            <th>aggregate</th>
            <th>mode</th>
            <th>status</th>
            <th>moves</th>
            <th>made</th>
            <th>expires</th>
          </tr>
        </thead>
        <tbody>
          {plans.data.items.map((p) => (
            <tr key={p.id}>
              <td>
                <Link to={`/plans/${p.id}`}>#{p.id}</Link>
              </td>
              <td>{p.aggregate}</td>
              <td>{p.mode}</td>
              <td className={`status ${p.status}`}>{p.status}</td>
              <td>{p.moveCount}</td>
              <td>{time(p.createdAt)}</td>
              <td>{time(p.expiresAt)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {plans.data.items.length === 0 && <p className="muted">No plans yet.</p>}
    </section>
  );
}

function latestDecisions(decisions: MoveDecision[]): Map<number, MoveDecision> {
  const out = new Map<number, MoveDecision>();
  for (const d of [...decisions].sort((a, b) => a.decidedAt.localeCompare(b.decidedAt))) out.set(d.step, d);
  return out;
}

export function PlanDetail(props: { id: string }) {
  const can = useCan();
  const plan = usePoll(`plan:${props.id}`, () => get<StoredPlan>(`/v1/plans/${props.id}`));
  const hosts = usePoll(`plan-hosts:${props.id}`, () => get<PlanHosts>(`/v1/plans/${props.id}/hosts`), 5000);
  const [comment, setComment] = useState('');
  if (plan.error) return <Failure message={plan.error} />;
  if (plan.data === null) return <Loading />;
  const p = plan.data;
  const agg = p.plan.aggregates[0];
  const moves: PlanMove[] = p.plan.aggregates.flatMap((a) => a.moves);
  const waves = [...new Set(moves.map((m) => m.wave))].sort((a, b) => a - b);
  const decided = latestDecisions(p.decisions);
  const open = OPEN.includes(p.status);
  const decide = open && (can('plan.approve') || can('plan.reject'));
  return (
    <section className="card plan" aria-label={`plan ${p.id}`}>
      <header>
        <h2>
          Plan #{p.id} · {p.aggregate}
        </h2>
        <span className={`badge mode ${p.mode}`}>{p.mode}</span>
        <span className={`badge status ${p.status}`} data-testid="plan-status">
          {p.status}
        </span>
      </header>
      <p>
        Made {time(p.createdAt)} from the snapshot of {time(p.snapshotTakenAt)}
        {p.expiresAt && <>, expires {time(p.expiresAt)}</>}. {moves.length} moves in {waves.length} waves
        {agg && (
          <>
            ; imbalance {num(agg.before.imbalance)} → {num(agg.after.imbalance)}
          </>
        )}
        .
      </p>
      {agg && agg.unresolved.length > 0 && (
        <ul className="unresolved">
          {agg.unresolved.map((u) => (
            <li key={u}>{u}</li>
          ))}
        </ul>
      )}
      {p.plan.aggregates.map((a) => (
        <HostsOutcome key={a.name} aggregate={a} named={p.plan.aggregates.length > 1} />
      ))}
      {decide && (
        <div className="decide-plan">
          <label>
            Comment
            <input
              name="plan-comment"
              value={comment}
              onChange={(e) => setComment(e.target.value)}
              placeholder="why (kept in the audit log)"
            />
          </label>
          {can('plan.approve') && (
            <ActionButton
              label="Approve plan"
              className="primary"
              path={`/v1/plans/${p.id}/approve`}
              body={() => withComment(comment)}
              onDone={() => setComment('')}
            />
          )}
          {can('plan.reject') && (
            <ActionButton
              label="Reject plan"
              className="danger"
              path={`/v1/plans/${p.id}/reject`}
              body={() => withComment(comment)}
              onDone={() => setComment('')}
            />
          )}
        </div>
      )}
      <h3>Hosts before and after</h3>
      {hosts.error ? (
        <Failure message={hosts.error} />
      ) : hosts.data === null ? (
        <Loading />
      ) : (
        <BeforeAfter
          hosts={hosts.data.hosts}
          dimensions={hosts.data.dimensions}
          title={`hosts of plan ${p.id}`}
        />
      )}
      <h3>Moves</h3>
      {moves.length === 0 && <p className="muted">Nothing to move.</p>}
      {waves.map((w) => (
        <div key={w} className="wave">
          <h4>Wave {w}</h4>
          <table>
            <thead>
              <tr>
                <th>step</th>
                <th>server</th>
                <th>from → to</th>
                <th>reason</th>
                <th>gain</th>
                <th>worth against bar</th>
                <th>time</th>
                <th>decision</th>
                {decide && <th />}
              </tr>
            </thead>
            <tbody>
              {moves
                .filter((m) => m.wave === w)
                .map((m) => (
                  <MoveRow
                    key={m.step}
                    planId={p.id}
                    move={m}
                    decision={decided.get(m.step)}
                    decide={decide}
                  />
                ))}
            </tbody>
          </table>
        </div>
      ))}
    </section>
  );
}

/**
 * A move's threshold test as the operator weighs it (docs/policy.md, "The worth threshold"): what
 * it buys against what its cost asks, or why it is exempt; an exchange or a make-room move is
 * judged with the step it is paired with, which is named.
 */
function worthTest(m: PlanMove): string {
  const pair =
    m.exchangeWith !== undefined
      ? `; exchange with step ${m.exchangeWith}, judged as a pair`
      : m.makesRoomFor !== undefined
        ? `; makes room for step ${m.makesRoomFor}`
        : '';
  if (m.mandatory !== undefined)
    return `mandatory (${m.mandatory === 'evacuation' ? 'evacuation' : 'hard server group'}): no bar${pair}`;
  if (m.threshold === undefined) return pair === '' ? '-' : pair.slice(2);
  const clears = m.threshold.worth >= m.threshold.bar;
  return `${num(m.threshold.worth, 4)} ${clears ? '≥' : '<'} bar ${num(m.threshold.bar, 4)}${pair}`;
}

function MoveRow(props: {
  planId: string;
  move: PlanMove;
  decision: MoveDecision | undefined;
  decide: boolean;
}) {
  const { move: m, decision } = props;
  const can = useCan();
  const [comment, setComment] = useState('');
  return (
    <tr data-step={m.step}>
      <td>{m.step}</td>
      <td title={m.server}>{m.serverName ?? m.server}</td>
      <td>
        {m.from} → {m.to}
      </td>
      <td>
        <span className="phase">{phaseLabel(m)}</span> {m.reason}
        {m.after && m.after.length > 0 && <span className="muted"> (after {m.after.join(', ')})</span>}
      </td>
      <td>{m.gain === undefined ? '-' : num(m.gain, 4)}</td>
      <td className="worth">{worthTest(m)}</td>
      <td>{seconds(m.estimatedSeconds)}</td>
      <td title={decision?.comment ?? undefined}>
        {decision ? `${decision.decision} by ${decision.decidedBy.replace(/^operator:/, '')}` : '-'}
      </td>
      {props.decide && (
        <td className="decide-move">
          <input
            aria-label={`comment on step ${m.step}`}
            value={comment}
            onChange={(e) => setComment(e.target.value)}
            placeholder="comment"
          />
          {can('plan.approve') && (
            <ActionButton
              label="Approve"
              path={`/v1/plans/${props.planId}/approve`}
              body={() => withComment(comment, { steps: [m.step] })}
              onDone={() => setComment('')}
            />
          )}
          {can('plan.reject') && (
            <ActionButton
              label="Reject"
              path={`/v1/plans/${props.planId}/reject`}
              body={() => withComment(comment, { steps: [m.step] })}
              onDone={() => setComment('')}
            />
          )}
        </td>
      )}
    </tr>
  );
}
