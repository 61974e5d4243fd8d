import { count, day } from "./format";

/**
 * A bar chart as inline SVG, drawn on the server: one bar a day. Presentation attributes only
 * (no style attributes: the pages' CSP allows no inline styles); the numbers are also in the
 * table under the charts, which is what screen readers are pointed to.
 */
const WIDTH = 320;
const HEIGHT = 140;
const PLOT = { left: 36, right: 8, top: 10, bottom: 22 };

/** A round number at or above `max` for the top of the scale: 1, 2 or 5 times a power of ten. */
export function scaleTop(max: number): number {
  if (max <= 0) return 1;
  const power = 10 ** Math.floor(Math.log10(max));
  return [1, 2, 5, 10].map((m) => m * power).find((top) => top >= max)!;
}

export function BarChart(props: { id: string; title: string; days: number[]; values: number[]; color: string; describedBy: string }) {
  const top = scaleTop(Math.max(...props.values, 0));
  const plotWidth = WIDTH - PLOT.left - PLOT.right;
  const plotHeight = HEIGHT - PLOT.top - PLOT.bottom;
  const step = plotWidth / Math.max(props.values.length, 1);
  const barWidth = Math.max(step - 2, 1);
  const y = (value: number) => PLOT.top + plotHeight - (value / top) * plotHeight;
  const total = props.values.reduce((sum, v) => sum + v, 0);
  return (
    <svg
      class="chart"
      viewBox={`0 0 ${WIDTH} ${HEIGHT}`}
      width={WIDTH}
      height={HEIGHT}
      role="img"
      aria-labelledby={`${props.id}-title`}
      aria-describedby={props.describedBy}
      xmlns="http://www.w3.org/2000/svg"
    >
      <title id={`${props.id}-title`}>{`${props.title}: ${count(total)} over ${props.days.length} days`}</title>
      <line x1={PLOT.left} y1={PLOT.top} x2={WIDTH - PLOT.right} y2={PLOT.top} stroke="#d0d5dd" stroke-width="1" />
      <line
        x1={PLOT.left}
        y1={PLOT.top + plotHeight / 2}
        x2={WIDTH - PLOT.right}
        y2={PLOT.top + plotHeight / 2}
        stroke="#e4e7ec"
        stroke-width="1"
      />
      <line
        x1={PLOT.left}
        y1={PLOT.top + plotHeight}
        x2={WIDTH - PLOT.right}
        y2={PLOT.top + plotHeight}
        stroke="#667085"
        stroke-width="1"
      />
      <text x={PLOT.left - 4} y={PLOT.top + 4} text-anchor="end" font-size="10" fill="#4b5563">
        {count(top)}
      </text>
      <text x={PLOT.left - 4} y={PLOT.top + plotHeight + 4} text-anchor="end" font-size="10" fill="#4b5563">
        0
      </text>
      {props.values.map((value, i) => (
        <rect x={PLOT.left + i * step + 1} y={y(value)} width={barWidth} height={PLOT.top + plotHeight - y(value)} fill={props.color} />
      ))}
      <text x={PLOT.left} y={HEIGHT - 6} font-size="10" fill="#4b5563">
        {day(props.days[0] ?? 0).slice(5)}
      </text>
      <text x={WIDTH - PLOT.right} y={HEIGHT - 6} text-anchor="end" font-size="10" fill="#4b5563">
        {day(props.days[props.days.length - 1] ?? 0).slice(5)}
      </text>
    </svg>
  );
}
