// Search as the catalog and the playground do it: every word typed must appear, ignoring
// case, in what an item is searched by (its name, title, description, adapter and kind).
import { h } from "./app.js";

/** The lower-cased text an item is searched by. */
export const haystack = (...parts) => parts.filter((p) => typeof p === "string" && p).join("\n").toLowerCase();

/** A test of a haystack: true when every word of `query` is in it (an empty query: all). */
export function matcher(query) {
  const words = query.toLowerCase().split(/\s+/).filter(Boolean);
  return (hay) => words.every((w) => hay.includes(w));
}

/** A labelled search box calling `oninput(value)` as the operator types. */
export function searchBox(id, label, hint, oninput) {
  const input = h("input", { id, type: "search", autocomplete: "off", spellcheck: "false", "aria-describedby": `${id}-hint` });
  input.addEventListener("input", () => oninput(input.value));
  return {
    input,
    element: h("div", { class: "field" }, h("label", { for: id }, label), h("span", { class: "hint muted", id: `${id}-hint` }, hint), input),
  };
}
