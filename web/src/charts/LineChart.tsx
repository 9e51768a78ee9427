// A value over time (the imbalance of an aggregate cycle after cycle), as a polyline with its
// range and latest value written out.
import { num, time } from '../format.js';

export interface Point {
  at: string;
  value: number;
}

const W = 520;
const H = 120;
const PAD = { left: 44, right: 10, top: 10, bottom: 20 };

export function LineChart(props: { points: Point[]; title: string }) {
  const pts = [...props.points].sort((a, b) => Date.parse(a.at) - Date.parse(b.at));
  if (pts.length === 0) return <p className="muted">No cycles recorded yet.</p>;
  const t0 = Date.parse(pts[0]!.at);
  const t1 = Math.max(Date.parse(pts[pts.length - 1]!.at), t0 + 1);
  const vmax = Math.max(...pts.map((p) => p.value), 1e-9) * 1.1;
  const x = (t: number) => PAD.left + ((t - t0) / (t1 - t0)) * (W - PAD.left - PAD.right);
  const y = (v: number) => PAD.top + (1 - v / vmax) * (H - PAD.top - PAD.bottom);
  const path = pts.map((p) => `${x(Date.parse(p.at)).toFixed(1)},${y(p.value).toFixed(1)}`).join(' ');
  const last = pts[pts.length - 1]!;
  return (
    <figure className="chart">
      <svg viewBox={`0 0 ${W} ${H}`} width="100%" role="img" aria-label={props.title}>
        <line
          x1={PAD.left}
          y1={H - PAD.bottom}
          x2={W - PAD.right}
          y2={H - PAD.bottom}
          className="axis-line"
        />
        <line x1={PAD.left} y1={PAD.top} x2={PAD.left} y2={H - PAD.bottom} className="axis-line" />
        <text x={PAD.left - 4} y={PAD.top + 8} textAnchor="end" className="axis">
          {num(vmax, 2)}
        </text>
        <text x={PAD.left - 4} y={H - PAD.bottom} textAnchor="end" className="axis">
          0
        </text>
        <text x={PAD.left} y={H - 4} className="axis">
          {time(pts[0]!.at)}
        </text>
        <text x={W - PAD.right} y={H - 4} textAnchor="end" className="axis">
          {time(last.at)}
        </text>
        {pts.length > 1 ? (
          <polyline points={path} className="line" />
        ) : (
          <circle cx={x(t0)} cy={y(last.value)} r={3} className="dot" />
        )}
      </svg>
      <figcaption>
        {props.title}: now {num(last.value)} ({pts.length} cycles)
      </figcaption>
    </figure>
  );
}
