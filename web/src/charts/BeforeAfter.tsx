// Host utilization before and after a plan, side by side per host, for one dimension at a time.
import { useState } from 'react';
import { pct } from '../format.js';
import type { BeforeAfterHost } from '../types.js';
import { HOT } from './color.js';

const BAR_H = 9;
const ROW = 28;
const NAME_W = 150;
const BAR_W = 300;

export function BeforeAfter(props: { hosts: BeforeAfterHost[]; dimensions: string[]; title: string }) {
  const [dim, setDim] = useState(props.dimensions[0] ?? 'cpu');
  const d = props.dimensions.includes(dim) ? dim : (props.dimensions[0] ?? dim);
  const max = Math.max(1, ...props.hosts.flatMap((h) => [h.before[d] ?? 0, h.after[d] ?? 0]));
  const height = props.hosts.length * ROW + 24;
  const w = (u: number) => (u / max) * BAR_W;
  return (
    <figure className="chart before-after">
      <fieldset className="tabs" aria-label="dimension">
        {props.dimensions.map((x) => (
          <button key={x} type="button" aria-pressed={x === d} onClick={() => setDim(x)}>
            {x}
          </button>
        ))}
        <span className="legend">
          <i className="before" /> before <i className="after" /> after
        </span>
      </fieldset>
      <svg
        viewBox={`0 0 ${NAME_W + BAR_W + 60} ${height}`}
        width={NAME_W + BAR_W + 60}
        role="img"
        aria-label={props.title}
      >
        <line x1={NAME_W + w(HOT)} x2={NAME_W + w(HOT)} y1={0} y2={height - 20} className="hot-line" />
        {props.hosts.map((h, i) => {
          const b = h.before[d] ?? 0;
          const a = h.after[d] ?? 0;
          const y = i * ROW + 4;
          return (
            <g
              key={h.name}
              data-host={h.name}
              aria-label={`${h.name}: ${d} ${pct(b)} before, ${pct(a)} after`}
            >
              <text x={4} y={y + 14} className="host-name">
                {h.name}
              </text>
              <rect x={NAME_W} y={y} width={w(b)} height={BAR_H} className="bar before" />
              <rect x={NAME_W} y={y + BAR_H + 1} width={w(a)} height={BAR_H} className="bar after" />
              <text x={NAME_W + Math.max(w(b), w(a)) + 4} y={y + 14} className="axis">
                {pct(b)} → {pct(a)}
              </text>
            </g>
          );
        })}
        <text x={NAME_W + w(HOT)} y={height - 6} textAnchor="middle" className="axis">
          hot {pct(HOT)}
        </text>
      </svg>
    </figure>
  );
}
