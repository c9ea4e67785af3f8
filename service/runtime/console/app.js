// The console shell: the bearer token (sessionStorage, sent in Authorization, never a cookie),
// the hash router (`#page` or `#page?key=value`), the JSON API and the live feed of the open
// page (SSE read through fetch, since EventSource cannot send an Authorization header).
import { pages } from "./pages.js";

const TOKEN_KEY = "mcp-console-token";
// `feed`: the running stream's AbortController; `feedQuery`: what it streams
// (`view=calls&chart=...`); `live`: the open page's handler of each update.
const state = { page: null, feed: null, feedQuery: null, live: null };

export function token() {
  return sessionStorage.getItem(TOKEN_KEY) || "";
}

export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

/** GET `api/<path>` with the token; JSON back, or an ApiError naming what went wrong. */
export async function api(path) {
  const res = await fetch(`api/${path}`, { headers: { authorization: `Bearer ${token()}` } });
  const body = await res.json().catch(() => ({}));
  if (!res.ok) throw new ApiError(res.status, body.error || `HTTP ${res.status}`);
  return body;
}

/** POST `api/<path>` with the token and `body` as JSON; JSON back, or an ApiError. */
export async function apiPost(path, body) {
  const res = await fetch(`api/${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${token()}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const answer = await res.json().catch(() => ({}));
  if (!res.ok) throw new ApiError(res.status, answer.error || `HTTP ${res.status}`);
  return answer;
}

/** `h("p", {class: "x"}, "text", child)`: an element; text is always text, never HTML. */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else el.setAttribute(k, v === true ? "" : String(v));
  }
  for (const c of children.flat(Infinity)) {
    if (c === undefined || c === null || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

/** Replaces `target`'s children with `children`, arrays flattened, empty ones left out. */
export function put(target, ...children) {
  target.replaceChildren(...children.flat(Infinity).filter((c) => c !== "" && c !== null && c !== undefined && c !== false));
}

export function mcpPath() {
  return document.body.dataset.mcpPath || "";
}

function showLogin(message) {
  document.getElementById("login").hidden = false;
  document.getElementById("signout").hidden = true;
  document.getElementById("page").replaceChildren();
  document.getElementById("login-error").textContent = message || "";
  stopFeed();
}

async function render() {
  const [name, query] = (location.hash || "#overview").slice(1).split("?");
  const page = pages[name] ? name : "overview";
  for (const a of document.querySelectorAll("#nav a")) {
    if (a.getAttribute("href") === `#${page}`) a.setAttribute("aria-current", "page");
    else a.removeAttribute("aria-current");
  }
  if (!token()) return showLogin();
  document.getElementById("login").hidden = true;
  document.getElementById("signout").hidden = false;
  const target = document.getElementById("page");
  state.page = page;
  state.live = null;
  try {
    const view = await pages[page](target, new URLSearchParams(query || ""));
    if (state.page !== page) return;
    // Only a live page has a feed, and it streams that page's data alone.
    if (view && view.live) {
      state.live = view.live;
      follow(view.feed);
    } else stopFeed();
  } catch (e) {
    if (e.status === 401) {
      sessionStorage.removeItem(TOKEN_KEY);
      return showLogin(`The token was refused: ${e.message}`);
    }
    if (e.status === 403) return showLogin(`Refused: ${e.message}`);
    target.replaceChildren(h("p", { class: "error", role: "alert" }, `Could not load ${page}: ${e.message}`));
  }
}

function stopFeed() {
  if (state.feed) state.feed.abort();
  state.feed = null;
  state.feedQuery = null;
}

/** Streams `api/events?<query>` to the open page (a page calls it again when its filter changes). */
export function follow(query) {
  if (state.feed && state.feedQuery === query) return;
  stopFeed();
  state.feedQuery = query;
  startFeed(query);
}

/** Reads `api/events?<query>` as a stream of SSE `update` events and hands each to the page. */
async function startFeed(query) {
  const ctl = new AbortController();
  state.feed = ctl;
  try {
    const res = await fetch(`api/events?${query}`, { headers: { authorization: `Bearer ${token()}` }, signal: ctl.signal });
    if (!res.ok || !res.body) throw new Error(`HTTP ${res.status}`);
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
    let buf = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buf += value;
      let end;
      while ((end = buf.indexOf("\n\n")) >= 0) {
        const block = buf.slice(0, end);
        buf = buf.slice(end + 2);
        const data = block.split("\n").filter((l) => l.startsWith("data:")).map((l) => l.slice(5).trimStart()).join("\n");
        if (data && state.live) state.live(JSON.parse(data));
      }
    }
  } catch (e) {
    if (ctl.signal.aborted) return;
  }
  // The stream ended (restart, network): try again shortly, if the page still wants it.
  if (state.feed === ctl) {
    state.feed = null;
    setTimeout(() => {
      if (token() && !state.feed && state.feedQuery === query) startFeed(query);
    }, 3000);
  }
}

/**
 * The token from what was pasted: blanks around it dropped, and a leading `Bearer ` (any
 * case, after an `Authorization:` header name too), since people copy whole header values.
 */
export function tokenFrom(pasted) {
  return pasted.trim().replace(/^authorization:\s*/i, "").replace(/^bearer\s+/i, "").trim();
}

document.getElementById("login-form").addEventListener("submit", (ev) => {
  ev.preventDefault();
  const input = document.getElementById("token");
  const pasted = tokenFrom(input.value);
  input.value = "";
  if (!pasted) return showLogin("That was only the word Bearer: paste the token after it too.");
  sessionStorage.setItem(TOKEN_KEY, pasted);
  render();
});
document.getElementById("signout").addEventListener("click", () => {
  sessionStorage.removeItem(TOKEN_KEY);
  showLogin("Signed out.");
});
window.addEventListener("hashchange", render);
render();
