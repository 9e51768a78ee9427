// What-if: plan an aggregate on the service's latest snapshot with changes (drain hosts, add hosts
// like one, another policy) and see the plan and before/after, without storing or executing it.
import { type FormEvent, useState } from 'react';
import { get, post } from '../api.js';
import { BeforeAfter } from '../charts/BeforeAfter.js';
import { num } from '../format.js';
import { usePoll } from '../poll.js';
import { useCan } from '../session.js';
import type { Aggregate, HostsPage, Page, Plan, WhatIfBody, WhatIfResult } from '../types.js';
import { Failure, HostsOutcome, Loading } from './common.js';

function isPlan(p: unknown): p is Plan {
  return typeof p === 'object' && p !== null && Array.isArray((p as { aggregates?: unknown }).aggregates);
}

export function WhatIf() {
  const can = useCan();
  if (!can('what-if')) return <p>Your roles do not allow what-if (the policy's what-if action).</p>;
  return <WhatIfForm />;
}

function WhatIfForm() {
  const aggs = usePoll('what-if:aggregates', () => get<Page<Aggregate>>('/v1/aggregates?limit=1000'), 10_000);
  const [aggregate, setAggregate] = useState('');
  const chosen = aggregate || aggs.data?.items[0]?.name || '';
  const hosts = usePoll(
    `what-if:hosts:${chosen}`,
    async () =>
      chosen === '' ? null : get<HostsPage>(`/v1/aggregates/${encodeURIComponent(chosen)}/hosts?limit=1000`),
    10_000,
  );
  const [drain, setDrain] = useState<string[]>([]);
  const [like, setLike] = useState('');
  const [count, setCount] = useState(0);
  const [mode, setMode] = useState<'' | 'spread' | 'pack'>('');
  const [policyText, setPolicyText] = useState('');
  const [result, setResult] = useState<WhatIfResult | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  if (aggs.error) return <Failure message={aggs.error} />;
  if (aggs.data === null) return <Loading />;
  const hostNames = hosts.data?.items.map((h) => h.name) ?? [];

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setError(null);
    let policy: Record<string, unknown> | undefined;
    if (policyText.trim() !== '') {
      try {
        const parsed: unknown = JSON.parse(policyText);
        if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
          throw new Error('expected an object');
        policy = parsed as Record<string, unknown>;
      } catch (err) {
        setError(`policy keys: not a JSON object (${err instanceof Error ? err.message : String(err)})`);
        return;
      }
    }
    if (mode !== '') policy = { ...(policy ?? {}), mode };
    const body: WhatIfBody = {
      aggregate: chosen,
      ...(drain.length > 0 ? { drainHosts: drain } : {}),
      ...(count > 0 ? { addHosts: { like: like || hostNames[0] || '', count } } : {}),
      ...(policy ? { policy } : {}),
    };
    setBusy(true);
    try {
      setResult(await post<WhatIfResult>('/v1/what-if', body));
    } catch (err) {
      setResult(null);
      setError(err instanceof Error ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  };

  const plan = result && isPlan(result.plan) ? result.plan : null;
  const moves = plan?.aggregates.flatMap((a) => a.moves) ?? [];
  return (
    <>
      <section className="card">
        <h2>What if…</h2>
        <form onSubmit={submit} className="what-if" aria-label="what-if">
          <label>
            Aggregate
            <select
              value={chosen}
              onChange={(e) => {
                setAggregate(e.target.value);
                setDrain([]);
                setLike('');
              }}
            >
              {aggs.data.items.map((a) => (
                <option key={a.name}>{a.name}</option>
              ))}
            </select>
          </label>
          <fieldset>
            <legend>Drain hosts</legend>
            {hostNames.map((h) => (
              <label key={h} className="inline">
                <input
                  type="checkbox"
                  checked={drain.includes(h)}
                  onChange={(e) => setDrain(e.target.checked ? [...drain, h] : drain.filter((x) => x !== h))}
                />{' '}
                {h}
              </label>
            ))}
          </fieldset>
          <label>
            Add hosts
            <input
              type="number"
              min={0}
              max={1000}
              value={count}
              onChange={(e) => setCount(Number(e.target.value))}
            />
          </label>
          <label>
            like
            <select value={like || hostNames[0] || ''} onChange={(e) => setLike(e.target.value)}>
              {hostNames.map((h) => (
                <option key={h}>{h}</option>
              ))}
            </select>
          </label>
          <label>
            Mode
            <select value={mode} onChange={(e) => setMode(e.target.value as '' | 'spread' | 'pack')}>
              <option value="">as configured</option>
              <option value="spread">spread</option>
              <option value="pack">pack</option>
            </select>
          </label>
          <label>
            Other policy keys (JSON)
            <textarea
              value={policyText}
              onChange={(e) => setPolicyText(e.target.value)}
              placeholder='{"budget": {"maxMoves": 10}}'
              rows={3}
            />
          </label>
          <button type="submit" className="primary" disabled={busy || chosen === ''}>
            Plan it
          </button>
        </form>
        {error && <Failure message={error} />}
      </section>
      {result && (
        <section className="card" aria-label="what-if result">
          <h2>
            {result.aggregate}: imbalance {num(result.before.imbalance)} → {num(result.after.imbalance)}
          </h2>
          <p>
            {moves.length} moves
            {result.changes.drained.length > 0 && <>, drained {result.changes.drained.join(', ')}</>}
            {result.changes.added.length > 0 && <>, added {result.changes.added.join(', ')}</>}. Nothing was
            stored or executed.
          </p>
          {plan?.aggregates.map((a) => (
            <HostsOutcome key={a.name} aggregate={a} named={plan.aggregates.length > 1} />
          ))}
          <BeforeAfter hosts={result.hosts} dimensions={result.dimensions} title="what-if hosts" />
          {moves.length > 0 && (
            <table>
              <thead>
                <tr>
                  <th>step</th>
                  <th>wave</th>
                  <th>server</th>
                  <th>from → to</th>
                  <th>reason</th>
                </tr>
              </thead>
              <tbody>
                {moves.map((m) => (
                  <tr key={m.step}>
                    <td>{m.step}</td>
                    <td>{m.wave}</td>
                    <td>{m.serverName ?? m.server}</td>
                    <td>
                      {m.from} → {m.to}
                    </td>
                    <td>{m.reason}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </section>
      )}
    </>
  );
}
