// Small pieces every page uses.
import type { PlanAggregate } from '../types.js';

export function Loading() {
  return <p className="muted">Loading…</p>;
}

export function Failure(props: { message: string }) {
  return (
    <p role="alert" className="error">
      {props.message}
    </p>
  );
}

/**
 * What a plan leaves of an aggregate's hosts (pack), as the CLI's plan text says it: the hosts it
 * empties, those left holding only servers that cannot move, and the empty hosts it keeps as
 * spares. Nothing when there are none.
 */
export function HostsOutcome(props: { aggregate: PlanAggregate; named: boolean }) {
  const { aggregate: a } = props;
  const partly = a.hostsPartlyDrained ?? [];
  const spare = a.spareHosts ?? [];
  if (a.hostsFreed.length === 0 && partly.length === 0 && spare.length === 0) return null;
  const of = props.named ? `${a.name}: ` : '';
  return (
    <ul className="hosts-outcome" data-aggregate={a.name}>
      {a.hostsFreed.length > 0 && (
        <li>
          {of}Hosts freed: {a.hostsFreed.join(', ')}
        </li>
      )}
      {partly.length > 0 && (
        <li>
          {of}Partly drained (only unmovable servers left): {partly.join(', ')}
        </li>
      )}
      {spare.length > 0 && (
        <li>
          {of}Spare hosts (kept empty): {spare.join(', ')}
        </li>
      )}
    </ul>
  );
}
