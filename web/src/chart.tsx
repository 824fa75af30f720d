import { useId } from 'react';

export interface ChartPoint {
  label: string;
  value: number;
  /** What a reader hears and sees on hover (e.g. the exact decimal amount). */
  text: string;
}

/**
 * A bar chart in plain SVG (no chart library in the initial bundle). Values are for drawing only: the
 * exact figures are in each bar's title and in the table under the chart.
 */
export function BarChart({ title, points, tableLabel }: { title: string; points: ChartPoint[]; tableLabel: string }) {
  const id = useId();
  const width = 640;
  const height = 180;
  const max = Math.max(...points.map((p) => p.value), 0);
  const barWidth = points.length ? width / points.length : width;
  const tick = Math.max(1, Math.ceil(points.length / 6));
  return (
    <figure className="chart">
      <figcaption id={`${id}-title`}>{title}</figcaption>
      <svg viewBox={`0 0 ${width} ${height + 20}`} role="img" aria-labelledby={`${id}-title`} preserveAspectRatio="none">
        <line x1="0" y1={height} x2={width} y2={height} className="axis" />
        {points.map((point, index) => {
          const barHeight = max > 0 ? (point.value / max) * (height - 8) : 0;
          return (
            <g key={point.label}>
              <rect x={index * barWidth + 1} y={height - barHeight} width={Math.max(1, barWidth - 2)} height={barHeight} className="bar">
                <title>{`${point.label}: ${point.text}`}</title>
              </rect>
              {index % tick === 0 && (
                // The first label starts at the left edge: centred under the first bar, its start would be cut off.
                <text x={index === 0 ? 0 : index * barWidth + barWidth / 2} y={height + 15} textAnchor={index === 0 ? 'start' : 'middle'} className="tick">
                  {point.label}
                </text>
              )}
            </g>
          );
        })}
      </svg>
      <details>
        <summary>{tableLabel}</summary>
        <table className="table compact">
          <tbody>
            {points
              .filter((p) => p.value !== 0)
              .map((p) => (
                <tr key={p.label}>
                  <th scope="row">{p.label}</th>
                  <td>{p.text}</td>
                </tr>
              ))}
          </tbody>
        </table>
      </details>
    </figure>
  );
}
