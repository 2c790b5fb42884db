import { findMeasurement, formsLabel, type Measurement } from "./measurement.ts";
import { SCENARIOS } from "./scenarios.ts";
import type { ServerName } from "./servers.ts";

const WIDTH = 780;
const HEIGHT = 420;
const PLOT = { left: 70, right: 560, top: 50, bottom: 360 };

const SERIES: { server: ServerName; percentile: "p50" | "p99"; color: string; dash: string }[] = [
  { server: "formdeck", percentile: "p50", color: "#2563eb", dash: "" },
  { server: "formdeck", percentile: "p99", color: "#2563eb", dash: "6 4" },
  { server: "minimal handler", percentile: "p50", color: "#dc2626", dash: "" },
  { server: "minimal handler", percentile: "p99", color: "#dc2626", dash: "6 4" },
];

const escapeXml = (text: string) =>
  text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
const text = (x: number, y: number, content: string, attributes = "") =>
  `<text x="${x.toFixed(1)}" y="${y.toFixed(1)}"${attributes && ` ${attributes}`}>${escapeXml(content)}</text>`;
const horizontal = (y: number, x1: number, x2: number, stroke: string) =>
  `<line x1="${x1}" x2="${x2}" y1="${y.toFixed(1)}" y2="${y.toFixed(1)}" ${stroke}/>`;

/** Maps a value to [from, to] on a log scale over [min, max]. */
function logScale(min: number, max: number, from: number, to: number) {
  const span = Math.log10(max) - Math.log10(min) || 1;
  return (value: number) => from + ((Math.log10(value) - Math.log10(min)) / span) * (to - from);
}

/**
 * List latency (p50 and p99, log scale) against organization size (log scale) for formdeck and
 * the minimal handler, hand-written SVG. Latencies under 1 ms are drawn at 1 ms.
 */
export function listLatencyChart(measurements: readonly Measurement[], connections: number) {
  const sizes = [
    ...new Set(
      measurements
        .filter((m) => m.scenario === SCENARIOS.listDefaults && m.server === "formdeck")
        .map((m) => m.forms as number),
    ),
  ].sort((a, b) => a - b);
  const series = SERIES.map((s) => ({
    ...s,
    points: sizes.flatMap((forms) => {
      const m = findMeasurement(measurements, SCENARIOS.listDefaults, forms, s.server);
      const ms = m?.summary.latencyMs?.[s.percentile];
      return ms === undefined ? [] : [{ forms, ms: Math.max(1, ms) }];
    }),
  }));
  const values = series.flatMap((s) => s.points.map((p) => p.ms));
  const yMin = 10 ** Math.floor(Math.log10(Math.min(...values, 10)));
  const yMax = 10 ** Math.ceil(Math.log10(Math.max(...values, 10)));
  const x = logScale(sizes[0] ?? 100, sizes.at(-1) ?? 1_000_000, PLOT.left + 30, PLOT.right - 30);
  const y = logScale(yMin, yMax, PLOT.bottom, PLOT.top);

  const parts: string[] = [];
  for (let tick = yMin; tick <= yMax; tick *= 10) {
    parts.push(
      horizontal(y(tick), PLOT.left, PLOT.right, 'stroke="#e5e7eb"'),
      text(PLOT.left - 8, y(tick) + 4, `${tick} ms`, 'text-anchor="end"'),
    );
  }
  for (const forms of sizes) {
    parts.push(
      `<line x1="${x(forms).toFixed(1)}" x2="${x(forms).toFixed(1)}" y1="${PLOT.top}" y2="${PLOT.bottom}" stroke="#f3f4f6"/>`,
      text(x(forms), PLOT.bottom + 20, formsLabel(forms), 'text-anchor="middle"'),
    );
  }
  series.forEach((s, i) => {
    const path = s.points.map((p) => `${x(p.forms).toFixed(1)},${y(p.ms).toFixed(1)}`).join(" ");
    const stroke = `stroke="${s.color}" stroke-width="2"${s.dash ? ` stroke-dasharray="${s.dash}"` : ""}`;
    parts.push(`<polyline points="${path}" fill="none" ${stroke}/>`);
    for (const p of s.points) {
      parts.push(
        `<circle cx="${x(p.forms).toFixed(1)}" cy="${y(p.ms).toFixed(1)}" r="3" fill="${s.color}"/>`,
      );
    }
    const legendY = PLOT.top + 10 + i * 22;
    parts.push(
      horizontal(legendY, PLOT.right + 20, PLOT.right + 50, stroke),
      text(PLOT.right + 56, legendY + 4, `${s.server} ${s.percentile}`),
    );
  });
  const title = `GET /forms (defaults), ${connections} connections: latency by organization size`;
  const middleY = (PLOT.top + PLOT.bottom) / 2;
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${HEIGHT}" viewBox="0 0 ${WIDTH} ${HEIGHT}" font-family="sans-serif" font-size="12">`,
    `<title>${escapeXml(title)}</title>`,
    `<rect width="${WIDTH}" height="${HEIGHT}" fill="#ffffff"/>`,
    text(PLOT.left, 28, title, 'font-size="14" font-weight="bold"'),
    `<rect x="${PLOT.left}" y="${PLOT.top}" width="${PLOT.right - PLOT.left}" height="${PLOT.bottom - PLOT.top}" fill="none" stroke="#9ca3af"/>`,
    ...parts,
    text(
      (PLOT.left + PLOT.right) / 2,
      HEIGHT - 20,
      "forms in the organization (log scale)",
      'text-anchor="middle"',
    ),
    text(
      16,
      middleY,
      "latency (log scale)",
      `text-anchor="middle" transform="rotate(-90 16 ${middleY})"`,
    ),
    "</svg>",
    "",
  ].join("\n");
}
