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

export interface ChartSeries {
  name: string;
  /** Drawing values, one per label (may be negative: bars then hang below the zero line). */
  values: number[];
  /** What a reader hears and sees for each value (the exact decimal amount). */
  texts: string[];
}

/**
 * Bars of several series side by side per label (revenue, cost and margin of a day), in plain SVG with a
 * legend. As with BarChart, the values are for drawing only; the exact figures are in the titles and the table.
 */
export function GroupedBarChart({ title, labels, series, tableLabel, testId }: { title: string; labels: string[]; series: ChartSeries[]; tableLabel: string; testId?: string }) {
  const id = useId();
  const width = 640;
  const height = 180;
  const top = 8;
  const values = series.flatMap((s) => s.values);
  const max = Math.max(0, ...values);
  const min = Math.min(0, ...values);
  const span = max - min || 1;
  const y = (value: number) => top + ((max - value) / span) * (height - top);
  const zero = y(0);
  const groupWidth = labels.length ? width / labels.length : width;
  const barWidth = Math.max(1, (groupWidth * 0.8) / Math.max(1, series.length));
  const tick = Math.max(1, Math.ceil(labels.length / 6));
  return (
    <figure className="chart" data-testid={testId}>
      <figcaption id={`${id}-title`}>{title}</figcaption>
      <ul className="legend">
        {series.map((s, index) => (
          <li key={s.name}>
            <span className={`swatch s${index + 1}`} aria-hidden="true" />
            {s.name}
          </li>
        ))}
      </ul>
      <svg viewBox={`0 0 ${width} ${height + 20}`} role="img" aria-labelledby={`${id}-title`} preserveAspectRatio="none">
        <line x1="0" y1={zero} x2={width} y2={zero} className="axis" />
        {labels.map((label, index) => (
          <g key={label}>
            {series.map((s, k) => {
              const value = s.values[index] ?? 0;
              const end = y(value);
              return (
                <rect key={s.name} x={index * groupWidth + groupWidth * 0.1 + k * barWidth} y={Math.min(end, zero)} width={Math.max(1, barWidth - 1)} height={Math.abs(end - zero)} className={`bar s${k + 1}`} data-series={k} data-label={label}>
                  <title>{`${label} · ${s.name}: ${s.texts[index] ?? ''}`}</title>
                </rect>
              );
            })}
            {index % tick === 0 && (
              <text x={index === 0 ? 0 : index * groupWidth + groupWidth / 2} y={height + 15} textAnchor={index === 0 ? 'start' : 'middle'} className="tick">
                {label}
              </text>
            )}
          </g>
        ))}
      </svg>
      <details>
        <summary>{tableLabel}</summary>
        <table className="table compact">
          <thead>
            <tr>
              <td />
              {series.map((s) => (
                <th key={s.name} scope="col">
                  {s.name}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {labels.map((label, index) =>
              series.every((s) => (s.values[index] ?? 0) === 0) ? null : (
                <tr key={label} data-label={label}>
                  <th scope="row">{label}</th>
                  {series.map((s) => (
                    <td key={s.name}>{s.texts[index]}</td>
                  ))}
                </tr>
              ),
            )}
          </tbody>
        </table>
      </details>
    </figure>
  );
}
