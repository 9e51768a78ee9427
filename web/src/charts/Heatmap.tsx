// Per-host utilization per dimension: one row per host, one cell per dimension, coloured by load.
// Host names are text (findable by people and tests), and hot rows say "hot" as well as show it.
import { pct } from '../format.js';
import type { HostView } from '../types.js';
import { HOT, heatColor, inkOn } from './color.js';

const ROW = 26;
const NAME_W = 150;
const CELL_W = 86;
const HEAD = 22;

export function Heatmap(props: { hosts: HostView[]; dimensions: string[]; title: string }) {
  const { hosts, dimensions } = props;
  const width = NAME_W + dimensions.length * CELL_W + 60;
  const height = HEAD + hosts.length * ROW + 4;
  return (
    <svg
      className="heatmap"
      viewBox={`0 0 ${width} ${height}`}
      width={width}
      height={height}
      aria-label={props.title}
    >
      {/* No role="img": the host names and figures stay text that assistive technology reads. */}
      <title>{props.title}</title>
      {dimensions.map((d, j) => (
        <text key={d} x={NAME_W + j * CELL_W + CELL_W / 2} y={15} textAnchor="middle" className="axis">
          {d}
        </text>
      ))}
      {hosts.map((h, i) => {
        const hot = dimensions.some((d) => (h.utilization[d] ?? 0) >= HOT);
        const y = HEAD + i * ROW;
        const state = !h.up ? ' (down)' : !h.enabled ? ' (disabled)' : '';
        return (
          <g
            key={h.name}
            className="heat-row"
            data-host={h.name}
            data-hot={hot ? 'true' : 'false'}
            aria-label={`${h.name}: ${dimensions.map((d) => `${d} ${pct(h.utilization[d] ?? 0)}`).join(', ')}${hot ? ', hot' : ''}`}
          >
            <text x={4} y={y + 17} className={hot ? 'host-name hot' : 'host-name'}>
              {h.name}
              {state}
            </text>
            {dimensions.map((d, j) => {
              const u = h.utilization[d] ?? 0;
              return (
                <g key={d} data-dimension={d} data-hot={u >= HOT ? 'true' : 'false'}>
                  <rect
                    x={NAME_W + j * CELL_W + 1}
                    y={y + 1}
                    width={CELL_W - 2}
                    height={ROW - 2}
                    rx={3}
                    fill={heatColor(u)}
                  >
                    <title>{`${h.name} ${d}: ${pct(u)}`}</title>
                  </rect>
                  <text
                    x={NAME_W + j * CELL_W + CELL_W / 2}
                    y={y + 17}
                    textAnchor="middle"
                    fill={inkOn(u)}
                    className="cell"
                  >
                    {pct(u)}
                  </text>
                </g>
              );
            })}
            {hot && (
              <text x={NAME_W + dimensions.length * CELL_W + 6} y={y + 17} className="hot-mark">
                hot
              </text>
            )}
          </g>
        );
      })}
    </svg>
  );
}
