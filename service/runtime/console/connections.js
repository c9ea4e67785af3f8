// The Connections page: who connected their own account at which upstream ([user_auth]), and
// removing a connection (that caller's next call asks to connect again). Never a token: the
// API sends none.
import { api, apiPost, h, put } from "./app.js";
import { haystack, matcher, searchBox } from "./search.js";
import { count, pagedTable, when } from "./ui.js";

/** Removes `c`; the row says what happened. */
function removeButton(c, done) {
  const status = h("span", { role: "status" });
  const button = h("button", { type: "button", class: "secondary", "aria-label": `Remove ${c.caller} at ${c.upstream}` }, "Remove");
  button.addEventListener("click", async () => {
    button.disabled = true;
    try {
      await apiPost("connections/revoke", { caller: c.caller, upstream: c.upstream });
      status.textContent = " Removed: their next call asks them to connect again.";
      done();
    } catch (e) {
      status.textContent = ` Not removed: ${e.message}`;
      status.className = "error";
      button.disabled = false;
    }
  });
  return h("div", { class: "actions" }, button, status);
}

function expiry(c) {
  if (!c.expires_at_ms) return "not said";
  return c.expires_at_ms < Date.now() ? `${when(c.expires_at_ms)} (expired)` : when(c.expires_at_ms);
}

function view(data, filter, redraw) {
  if (!data.configured) {
    return h("p", { class: "muted" }, "Each user's own upstream access is not configured: add [user_auth] and [[upstream_auth]] (docs/user-auth.md) to let callers connect their own accounts.");
  }
  const out = [];
  if (data.error) out.push(h("p", { class: "error", role: "alert" }, `The connections could not be read: ${data.error}.`));
  if (data.sealed_elsewhere) {
    out.push(h("p", { class: "bad" }, `${count(data.sealed_elsewhere, "entry is", "entries are")} sealed under a vault key this replica does not hold (a key rotation under way, or another deployment's); not listed.`));
  }
  const test = matcher(filter);
  const shown = data.connections.filter((c) => test(haystack(c.caller, c.upstream)));
  if (!data.connections.length) {
    out.push(h("p", { id: "connections-count" }, "No caller has connected an upstream account yet."));
    return out;
  }
  out.push(h("p", { id: "connections-count" }, filter.trim()
    ? `${shown.length} of ${count(data.connections.length, "connection")} match '${filter.trim()}'.`
    : `${count(data.connections.length, "connection")}.`));
  out.push(...pagedTable("Connections, by caller", ["Caller", "Upstream", "Connected", "Token expires", "Refreshable", "Action"], shown,
    (c) => [h("code", {}, c.caller), c.upstream, when(c.connected_at_ms), expiry(c), c.refreshable ? "yes" : "no", removeButton(c, redraw)]));
  return out;
}

export async function connections(target) {
  const box = h("div", { id: "connections" });
  let data = await api("connections");
  let filter = "";
  const draw = () => put(box, view(data, filter, async () => { data = await api("connections"); setTimeout(draw, 1500); }));
  const search = searchBox("connections-filter", "Find a caller or upstream", "Every word must appear in the caller or the upstream.", (v) => { filter = v; draw(); });
  const where = !data.configured ? "" : data.shared
    ? " Kept in Redis: every replica uses them; one removed here stops being used everywhere within 30 s."
    : " Kept in this replica's memory (no [redis]): each replica has its own.";
  put(target, h("h2", {}, "Connections"),
    h("p", { class: "muted" }, "Callers who connected their own account at an upstream ([user_auth])", data.configured && data.upstreams.length ? `: ${data.upstreams.join(", ")}` : "", ". Tokens are never shown.", where),
    data.configured && data.connections.length ? h("div", { class: "filters", role: "search" }, search.element) : "", box);
  draw();
}
