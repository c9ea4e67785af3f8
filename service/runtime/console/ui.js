// Small view parts the pages share: times, cards, tables that scroll inside themselves on a
// narrow screen (never the page), ok/bad marks, verbatim server text, and lists drawn a
// page at a time.
import { h } from "./app.js";

export const when = (ms) => (ms ? new Date(ms).toISOString().replace("T", " ").replace(/\.\d+Z$/, " UTC") : "-");

export const dur = (ms) => {
  const s = Math.floor(ms / 1000);
  return `${Math.floor(s / 86400)}d ${Math.floor((s % 86400) / 3600)}h ${Math.floor((s % 3600) / 60)}m ${s % 60}s`;
};

export const card = (title, pairs) => h("div", { class: "card" }, h("h3", {}, title),
  h("dl", {}, pairs.map(([k, v]) => [h("dt", {}, k), h("dd", {}, v)])));

/**
 * A table in a region of its own that scrolls sideways when the screen is narrower than the
 * table (keyboard users reach it: it takes focus; screen readers hear its caption).
 */
export const table = (caption, heads, rows) => h("div", { class: "scroll", role: "region", "aria-label": caption, tabindex: "0" },
  h("table", {}, h("caption", { class: "muted" }, caption),
    h("thead", {}, h("tr", {}, heads.map((x) => h("th", { scope: "col" }, x)))),
    h("tbody", {}, rows.map((r) => h("tr", {}, r.map((c) => h("td", {}, c)))))));

export const mark = (ok, yes, no) => h("span", { class: ok ? "ok" : "bad" }, ok ? yes : no);

/**
 * What the server sent, shown exactly (`data-verbatim`: the browser test allows a JSON `null`
 * in these, nowhere else).
 */
export const verbatim = (label, text) => h("pre", { tabindex: "0", "aria-label": label, "data-verbatim": "" }, text);

/** A JSON value shown verbatim. */
export const json = (label, value) => verbatim(label, JSON.stringify(value, null, 2));

/** "N things" with the right plural. */
export const count = (n, one, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/**
 * Draws `items` into `box` `step` at a time; returns the button that draws the next ones
 * (hidden when all are drawn): a list of thousands stays a page (an imported API's tools).
 */
export function paged(box, items, draw, step = 50) {
  let shown = 0;
  const more = h("button", { type: "button", class: "more" });
  const next = () => {
    const batch = items.slice(shown, shown + step);
    shown += batch.length;
    box.append(...batch.map(draw));
    const left = items.length - shown;
    more.textContent = `Show ${Math.min(step, left)} more (${left} not shown yet)`;
    more.hidden = left <= 0;
  };
  more.addEventListener("click", next);
  box.replaceChildren();
  next();
  return more;
}

/** A [`table`] whose rows are drawn a page at a time: the table, then its "more" button. */
export function pagedTable(caption, heads, items, row, step = 50) {
  const body = h("tbody");
  const region = table(caption, heads, []);
  region.querySelector("tbody").replaceWith(body);
  const more = paged(body, items, (item) => h("tr", {}, row(item).map((c) => h("td", {}, c))), step);
  return [region, more];
}
