// The playground: find a tool, prompt or resource by search, fill the form made from its
// schema, and send it through the real MCP endpoint (mcp.js). Answers of `input_required`
// run MRTR rounds (MCP 2026-07-28 basic/patterns/mrtr): each elicitation is shown as a form
// (or a link, in URL mode) with Send, Decline and Cancel, three distinct answers, and the
// request goes again with `inputResponses` and the sealed `requestState`.
import { api, h, mcpPath, put } from "./app.js";
import { kinds } from "./explore.js";
import { schemaForm } from "./form.js";
import { rpc } from "./mcp.js";
import { matcher, searchBox } from "./search.js";
import { count } from "./ui.js";

/** How many matches the picker lists at once (a search narrows the rest). */
const LISTED = 200;

/** The form of one elicitation: `{element, answer(action)}`, or null when unsupported. */
function elicitation(key, req) {
  if (req.method !== "elicitation/create") return null;
  const p = req.params || {};
  if (p.mode === "url") {
    return {
      element: h("div", {}, h("p", {}, p.message || ""), h("p", {}, h("a", { href: p.url, target: "_blank", rel: "noopener noreferrer" }, p.url)),
        h("p", { class: "muted" }, "Send tells the server you opened the link and finished there.")),
      answer: (action) => ({ action }),
    };
  }
  const f = schemaForm(p.requestedSchema, key);
  return {
    element: h("div", {}, h("p", {}, p.message || ""), f.element),
    answer: (action) => (action === "accept" ? { action, content: f.read() } : { action }),
  };
}

export async function playground(target, params) {
  const all = kinds(await api("catalog"));
  put(target, h("h2", {}, "Playground"));
  if (!mcpPath()) {
    target.append(h("p", {}, "The playground calls the MCP endpoint from this page, so it works when the console is on the main listener (console.listener = \"main\")."));
    return;
  }
  const exchange = h("pre", { id: "exchange", tabindex: "0", "aria-label": "Raw exchange", "data-verbatim": "" });
  const result = h("div", { id: "result", "aria-live": "polite" });
  const rounds = h("div", { id: "rounds" });
  const log = (what, data) => {
    exchange.textContent += `--- ${what}\n${JSON.stringify(data, null, 2)}\n`;
  };
  const failure = (e) => result.replaceChildren(h("p", { class: "bad", role: "alert" }, e.message));

  let kind = all.tools;
  let query = "";
  let chosen = null;
  let form = null;
  const status = h("p", { id: "pg-count", role: "status" });
  const pickLabel = h("label", { for: "pg-pick" });
  const picker = h("select", { id: "pg-pick", name: "item", size: 8 });
  const formBox = h("div", { id: "pg-args" });
  const submit = h("button", { type: "submit" });
  const search = searchBox("pg-search", "Search", "Words in a name, title, description or adapter.", (v) => {
    query = v;
    list();
  });

  const choose = (item) => {
    chosen = item;
    // A round still open belongs to the previous choice.
    rounds.replaceChildren();
    form = item ? kind.form(item) : null;
    put(formBox, form ? form.element : h("p", { class: "muted" }, `No ${kind.noun} matches the search.`));
    submit.disabled = !item;
  };
  /** The picker's entries: the first LISTED matches; the chosen one stays chosen while it matches. */
  const list = () => {
    const match = matcher(query);
    const found = kind.items.filter((i) => match(i.hay));
    const shown = found.slice(0, LISTED);
    picker.replaceChildren(...shown.map((i) => h("option", { value: i.value }, i.text)));
    picker.size = Math.min(8, Math.max(2, shown.length));
    const keep = chosen && shown.find((i) => i.value === chosen.value);
    const next = keep || shown[0] || null;
    if (next) picker.value = next.value;
    if (next !== chosen) choose(next);
    status.textContent = `${query.trim() ? `${found.length} of ` : ""}${count(kind.items.length, kind.noun)}${query.trim() ? " match" : ""}` +
      (found.length > LISTED ? `; the first ${LISTED} are listed, narrow the search for the rest.` : ".");
  };
  const show = (name) => {
    kind = all[name];
    pickLabel.textContent = kind.label.replace(/s$/, "");
    submit.textContent = kind.action;
    // A search for tools says nothing about prompts: each kind starts with all of its items.
    search.input.value = "";
    query = "";
    chosen = null;
    list();
  };
  picker.addEventListener("change", () => choose(kind.items.find((i) => i.value === picker.value) || null));

  /** Sends `params` of kind `k`, answering each input_required round through a form, until it completes. */
  const send = async (k, params) => {
    const answer = await rpc(k.method, params, log);
    const r = answer.result;
    if (answer.error) {
      rounds.replaceChildren();
      return result.replaceChildren(h("p", { class: "bad" }, `Error ${answer.error.code}: ${answer.error.message}`));
    }
    if (!r || r.resultType !== "input_required") {
      rounds.replaceChildren();
      return put(result, k.show(r || {}));
    }
    const asks = Object.entries(r.inputRequests || {}).map(([key, req]) => [key, req, elicitation(key, req)]);
    const box = h("form", { id: "round-form" }, h("h3", {}, `The ${k.noun} asks for input`),
      asks.map(([key, req, e]) => e ? e.element : h("p", { class: "bad" }, `${key}: ${req.method} is not supported by the playground; decline or cancel.`)));
    const reply = (action) => async (ev) => {
      ev.preventDefault();
      try {
        const inputResponses = {};
        for (const [key, , e] of asks) inputResponses[key] = e ? e.answer(action) : { action: action === "accept" ? "decline" : action };
        await send(k, { ...params, inputResponses, requestState: r.requestState });
      } catch (e) {
        failure(e);
      }
    };
    box.append(h("div", { class: "actions" },
      h("button", { type: "submit", "data-action": "accept" }, "Send"),
      h("button", { type: "button", class: "secondary", "data-action": "decline", onclick: reply("decline") }, "Decline"),
      h("button", { type: "button", class: "secondary", "data-action": "cancel", onclick: reply("cancel") }, "Cancel")));
    box.addEventListener("submit", reply("accept"));
    rounds.replaceChildren(box);
    result.replaceChildren(h("p", {}, "Waiting for your answer (Send, Decline or Cancel; the round is sealed in requestState)."));
  };

  const what = h("fieldset", { id: "pg-what", class: "choice" }, h("legend", {}, "Try"),
    Object.entries(all).map(([name, k]) => h("label", { class: "inline", for: `pg-what-${name}` },
      h("input", { type: "radio", id: `pg-what-${name}`, name: "pg-what", value: name, checked: name === "tools", onchange: () => show(name) }),
      ` ${k.label} (${k.items.length})`)));
  const finder = h("div", { class: "finder" }, what, search.element, status, pickLabel, picker);
  const run = h("form", { id: "pg-form" }, formBox, submit);
  run.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    exchange.textContent = "";
    rounds.replaceChildren();
    try {
      await send(kind, form.params());
    } catch (e) {
      failure(e);
    }
  });
  // Not a live region (the page is): the options and the raw exchange change as one types
  // and calls; the count (role=status) and the result (aria-live) say what matters.
  target.append(h("div", { "aria-live": "off" }, finder, run, rounds, result, h("h3", {}, "Raw exchange"), exchange));
  show("tools");
  // `#playground?tool=NAME` (the catalog's "Try" link) opens with that tool chosen.
  const wanted = params.get("tool");
  if (wanted) {
    search.input.value = wanted;
    query = wanted;
    list();
    const item = kind.items.find((i) => i.value === wanted);
    if (item) {
      picker.value = wanted;
      choose(item);
    }
  }
}
