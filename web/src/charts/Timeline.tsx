// An execution's moves on a time axis: each bar runs from issue to end (or now while in flight),
// coloured by state, with the state written beside it.
import { time } from '../format.js';
import type { ExecutionMove } from '../types.js';

const ROW = 22;
const NAME_W = 220;
const W = 720;

export function Timeline(props: {
  moves: ExecutionMove[];
  startedAt: string;
  endedAt: string | null;
  now: number;
}) {
  const t0 = Date.parse(props.startedAt);
  const ends = props.moves.map((m) => (m.endedAt !== null ? Date.parse(m.endedAt) : props.now));
  const t1 = Math.max(t0 + 1000, props.endedAt !== null ? Date.parse(props.endedAt) : props.now, ...ends);
  const x = (t: number) => NAME_W + ((t - t0) / (t1 - t0)) * (W - NAME_W - 90);
  const moves = [...props.moves].sort((a, b) => a.step - b.step);
  return (
    <svg
      className="timeline"
      viewBox={`0 0 ${W} ${moves.length * ROW + 22}`}
      width={W}
      role="img"
      aria-label="moves over time"
    >
      {moves.map((m, i) => {
        const y = i * ROW + 2;
        const start = m.issuedAt !== null ? Date.parse(m.issuedAt) : null;
        const end = m.endedAt !== null ? Date.parse(m.endedAt) : props.now;
        return (
          <g key={m.step} data-step={m.step} data-state={m.state}>
            <text x={4} y={y + 14} className="axis">
              {m.step}. {m.serverName ?? m.serverId.slice(0, 8)} {m.from} → {m.to}
            </text>
            {start !== null && (
              <rect
                x={x(start)}
                y={y + 3}
                width={Math.max(3, x(end) - x(start))}
                height={ROW - 8}
                rx={3}
                className={`move ${m.state}`}
              >
                <title>{`${m.state}: ${time(m.issuedAt)} to ${time(m.endedAt)}`}</title>
              </rect>
            )}
            <text x={W - 86} y={y + 14} className={`state ${m.state}`}>
              {m.state}
            </text>
          </g>
        );
      })}
      <text x={NAME_W} y={moves.length * ROW + 18} className="axis">
        {time(props.startedAt)}
      </text>
      <text x={W - 90} y={moves.length * ROW + 18} textAnchor="end" className="axis">
        {time(props.endedAt ?? new Date(props.now).toISOString())}
      </text>
    </svg>
  );
}
