// The score chart: uPlot over the points of GET /v1/reputation/{did}/history, the score at
// each anchored head the node computed (oldest first). The element carries data-points, the
// JSON of exactly what it plotted ({size, score} per point, in order), so a test can compare
// it with the API; a table of the same points sits under it for screen readers and keyboards.
import uPlot from 'uplot';
import { fixed, h, time } from './api.js';

// scoreChart returns the chart's element for points (possibly empty: then it says so).
export function scoreChart(points, { signal } = {}) {
  const plotted = points.filter((p) => Number.isFinite(p.score));
  const el = h('div', {
    class: 'chart', 'data-testid': 'score-chart', role: 'img',
    'data-points': JSON.stringify(plotted.map((p) => ({ size: p.size, score: p.score }))),
    'aria-label': plotted.length
      ? `Score at ${plotted.length} anchored head${plotted.length === 1 ? '' : 's'}, from ${fixed(plotted[0].score)} to ${fixed(plotted[plotted.length - 1].score)}`
      : 'No anchored history yet',
  });
  if (plotted.length === 0) {
    el.append(h('div', { class: 'empty' }, 'No anchored history yet: the score is charted at each head of the audit log the node anchors on chain.'));
    return { el, table: null };
  }
  // x: the head's time when every point has one, else its size.
  const byTime = plotted.every((p) => p.at > 0);
  const xs = plotted.map((p) => (byTime ? p.at : p.size));
  const css = getComputedStyle(document.documentElement);
  const color = (name) => css.getPropertyValue(name).trim() || '#888';
  const axis = { stroke: color('--muted'), grid: { stroke: color('--line'), width: 1 }, ticks: { stroke: color('--line') } };
  const opts = {
    width: 600, height: 240,
    // The points' own span; one point (or several at one x) gets a minute, or one log size,
    // either side: uPlot would otherwise span years after it.
    scales: { x: { time: byTime, range: () => xRange(Math.min(...xs), Math.max(...xs), byTime) }, y: { range: [0, 1] } },
    // Times in UTC, as everywhere else on the page.
    tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC'),
    legend: { live: true },
    cursor: { points: { size: 8 } },
    series: [
      { label: byTime ? 'anchored at' : 'log size', value: (u, v) => (v == null ? '—' : byTime ? time(v) : String(v)) },
      { label: 'score', stroke: color('--accent'), width: 2, points: { show: true, size: 6, fill: color('--accent') }, value: (u, v) => fixed(v) },
      { label: 'confidence', stroke: color('--muted'), width: 1, dash: [5, 4], points: { show: false }, value: (u, v) => fixed(v) },
    ],
    axes: [axis, { ...axis, values: (u, vals) => vals.map((v) => v.toFixed(1)) }],
  };
  const data = [xs, plotted.map((p) => p.score), plotted.map((p) => (Number.isFinite(p.confidence) ? p.confidence : null))];
  // uPlot measures its container: build it once the element is in the page, and follow its width.
  let plot = null;
  const size = () => Math.max(260, Math.floor(el.clientWidth));
  const ro = new ResizeObserver(() => {
    if (!el.isConnected) return;
    if (!plot) plot = new uPlot({ ...opts, width: size() }, data, el);
    else plot.setSize({ width: size(), height: 240 });
  });
  ro.observe(el);
  signal?.addEventListener('abort', () => { ro.disconnect(); plot?.destroy(); });
  const table = h('details', { class: 'points' },
    h('summary', null, `The ${plotted.length} point${plotted.length === 1 ? '' : 's'} as a table`),
    h('div', { class: 'scroll' }, h('table', null,
      h('caption', { class: 'sr-only' }, 'Score at each anchored head'),
      h('thead', null, h('tr', null, ['log size', 'epoch', 'anchored at', 'score', 'confidence', 'standing'].map((c) => h('th', { scope: 'col' }, c)))),
      h('tbody', null, plotted.map((p) => h('tr', null,
        h('td', { class: 'num' }, String(p.size)), h('td', { class: 'num' }, p.epoch ?? '—'), h('td', null, time(p.at)),
        h('td', { class: 'num' }, fixed(p.score)), h('td', { class: 'num' }, fixed(p.confidence)), h('td', { class: 'num' }, fixed(p.standing))))))));
  return { el, table };
}

// xRange is the x scale's span: the data's, or around a lone x a minute (or one log size) on
// each side.
function xRange(min, max, byTime) {
  if (min !== max) return [min, max];
  const pad = byTime ? 60 : 1;
  return [min - pad, max + pad];
}
