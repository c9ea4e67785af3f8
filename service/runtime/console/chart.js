// Line charts drawn as SVG by hand: no library, nothing inline for the CSP to refuse.
const NS = "http://www.w3.org/2000/svg";
const W = 320, H = 120, L = 40, B = 18, T = 8, R = 8;

function el(tag, attrs = {}, text) {
  const e = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  if (text !== undefined) e.textContent = text;
  return e;
}

function fmt(v) {
  if (v === 0) return "0";
  if (Math.abs(v) >= 100) return v.toFixed(0);
  if (Math.abs(v) >= 1) return v.toFixed(1);
  return v.toPrecision(2);
}

/**
 * A chart of `points` (`{at_ms, ...}`) over the last `spanMs`, plotting `key`; missing values
 * leave gaps. The SVG is an image with a text alternative naming the latest value.
 */
export function lineChart(points, key, title, unit, spanMs = 15 * 60 * 1000) {
  const now = Date.now();
  const values = points.filter((p) => p[key] !== null && p[key] !== undefined);
  const max = Math.max(0, ...values.map((p) => p[key])) || 1;
  const x = (t) => L + ((t - (now - spanMs)) / spanMs) * (W - L - R);
  const y = (v) => T + (1 - v / max) * (H - T - B);
  const last = values.length ? values[values.length - 1][key] : null;
  const label = `${title}: ${last === null ? "no calls" : `${fmt(last)} ${unit}`} (latest), peak ${fmt(max)} ${unit}, last 15 minutes`;
  const svg = el("svg", { viewBox: `0 0 ${W} ${H}`, role: "img", "aria-label": label });
  svg.append(el("title", {}, label));
  svg.append(el("line", { class: "axis", x1: L, y1: H - B, x2: W - R, y2: H - B }));
  svg.append(el("line", { class: "axis", x1: L, y1: T, x2: L, y2: H - B }));
  svg.append(el("text", { x: L + 4, y: T + 8, class: "name" }, `${title} (${unit})`));
  svg.append(el("text", { x: 2, y: T + 8 }, fmt(max)));
  svg.append(el("text", { x: 2, y: H - B }, "0"));
  svg.append(el("text", { x: L, y: H - 4 }, "-15 min"));
  svg.append(el("text", { x: W - R - 20, y: H - 4 }, "now"));
  let run = [];
  const flush = () => {
    if (run.length > 1) svg.append(el("polyline", { class: "line", points: run.join(" ") }));
    else if (run.length === 1) {
      const [cx, cy] = run[0].split(",");
      svg.append(el("circle", { class: "dot", cx, cy, r: 2.5 }));
    }
    run = [];
  };
  for (const p of points) {
    if (p.at_ms < now - spanMs) continue;
    const v = p[key];
    if (v === null || v === undefined) flush();
    else run.push(`${x(p.at_ms).toFixed(1)},${y(v).toFixed(1)}`);
  }
  flush();
  return svg;
}
