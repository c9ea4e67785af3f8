//! `/oauth/start` and `/oauth/callback`: the browser's side of a caller connecting an
//! upstream account (`crate::connect::flow`). Pages a person reads: what happened, what to do
//! next; never a token or a code. Not cacheable, never framed, no referrer sent on.
//! `POST /oauth/disconnect/<upstream>`, with the caller's bearer token as the MCP endpoint
//! takes it, forgets that caller's connection. `/oauth/connections` is a person's own page:
//! after a sign-in, each upstream, connected or not, with a Disconnect button
//! (`crate::connect::manage`).

use std::collections::HashMap;
use std::sync::Arc;

use axum::Router;
use axum::extract::{Path, RawQuery, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};

use crate::config::UserAuthConfig;
use crate::connect::flow::{BROWSER_COOKIE, Refusal, Step};
use crate::connect::manage::{Mine, TICKET_COOKIE, TICKET_SECS, Viewer};
use crate::state::AppState;

/// The routes, when `[user_auth]` is configured.
pub fn routes() -> Router<Arc<AppState>> {
    Router::new()
        .route("/oauth/start", get(start))
        .route("/oauth/callback", get(callback))
        .route("/oauth/disconnect/{upstream}", post(disconnect))
        .route("/oauth/connections", get(mine).post(disconnect_mine))
}

/// A person's connections; without a good ticket, to the sign-in first.
async fn mine(State(state): State<Arc<AppState>>, headers: axum::http::HeaderMap) -> Response {
    let Some(connections) = state.connections.as_ref() else { return StatusCode::NOT_FOUND.into_response() };
    let sealer = state.sealer.load();
    match connections.viewer(&sealer, cookie(&headers, TICKET_COOKIE)) {
        Some(viewer) => secured(mine_page(&viewer, &connections.mine(&viewer).await, None)),
        None => {
            let step = connections.sign_in_to_manage(&sealer).await;
            answer(&state, step, &connections.config)
        }
    }
}

/// The page's Disconnect form: `upstream` and the page's `form_key`.
async fn disconnect_mine(
    State(state): State<Arc<AppState>>,
    headers: axum::http::HeaderMap,
    body: axum::body::Bytes,
) -> Response {
    let Some(connections) = state.connections.as_ref() else { return StatusCode::NOT_FOUND.into_response() };
    let sealer = state.sealer.load();
    let Some(viewer) = connections.viewer(&sealer, cookie(&headers, TICKET_COOKIE)) else {
        return secured(page(
            StatusCode::UNAUTHORIZED,
            "Sign in again",
            "Your sign-in on this page has ended; nothing changed. Open /oauth/connections again to sign in.",
        ));
    };
    let form = params(Some(String::from_utf8_lossy(&body).into_owned()));
    let field = |k: &str| form.get(k).map(String::as_str).unwrap_or_default();
    let upstream = field("upstream");
    match connections.disconnect_mine(&viewer, field("form_key"), upstream).await {
        Ok(()) => {
            let notice =
                format!("Disconnected your {upstream} account. An agent that needs it will ask you to connect again.");
            secured(mine_page(&viewer, &connections.mine(&viewer).await, Some(&notice)))
        }
        Err(r) => answer(&state, Err(r), &connections.config),
    }
}

/// The page of `viewer`'s connections, with `notice` on top when something just changed.
fn mine_page(viewer: &Viewer, rows: &[Mine], notice: Option<&str>) -> Response {
    let mut list = String::new();
    for row in rows {
        let name = escape(&row.upstream);
        match row.connected_at_ms {
            Some(at) => list.push_str(&format!(
                "<li><strong>{name}</strong>: connected since <span class=\"t\">{}</span>\
                 <form method=\"post\" action=\"/oauth/connections\">\
                 <input type=\"hidden\" name=\"form_key\" value=\"{}\">\
                 <input type=\"hidden\" name=\"upstream\" value=\"{name}\">\
                 <button type=\"submit\" aria-label=\"Disconnect {name}\">Disconnect</button></form></li>",
                when(at),
                escape(&viewer.form_key)
            )),
            None => list.push_str(&format!("<li><strong>{name}</strong>: not connected</li>")),
        }
    }
    let notice = notice.map(|n| format!("<p role=\"status\" class=\"notice\">{}</p>", escape(n))).unwrap_or_default();
    let body = format!(
        "<p>Signed in as <code>{}</code>.</p>{notice}<ul>{list}</ul>\
         <p>Your agents ask you to connect an account when one of their tools needs it. Disconnecting forgets \
         the account here and, where the service supports it, revokes the access you allowed there; you can \
         also revoke it in that service's own settings.</p>",
        escape(&viewer.caller)
    );
    html(StatusCode::OK, "Your connections", &body)
}

/// `2026-12-06 11:09 UTC`.
fn when(ms: u64) -> String {
    let t = humantime::format_rfc3339_seconds(std::time::UNIX_EPOCH + std::time::Duration::from_millis(ms)).to_string();
    format!("{} {} UTC", &t[..10], &t[11..16])
}

/// Forgets the caller's connection to `upstream`: 204 (also when there was none), 401 without
/// a usable token, 404 for an upstream not configured here.
async fn disconnect(
    State(state): State<Arc<AppState>>,
    Path(upstream): Path<String>,
    uri: axum::http::Uri,
    headers: axum::http::HeaderMap,
) -> Response {
    let Some(connections) = state.connections.as_ref() else { return StatusCode::NOT_FOUND.into_response() };
    let auth = state.auth.load();
    let identity = match super::auth::authenticate(auth.as_deref(), &uri, &headers, std::time::Instant::now()).await {
        Ok(Some(identity)) => identity,
        Ok(None) => return StatusCode::NOT_FOUND.into_response(),
        Err(rejected) => return super::auth::unauthorized(auth.as_deref(), &rejected, &state.server.path),
    };
    match connections.disconnect(&identity, &upstream).await {
        Ok(()) => StatusCode::NO_CONTENT.into_response(),
        Err(crate::connect::Disconnect::Unknown) => {
            (StatusCode::NOT_FOUND, format!("no upstream '{upstream}' is configured here\n")).into_response()
        }
        Err(crate::connect::Disconnect::Unavailable) => {
            (StatusCode::SERVICE_UNAVAILABLE, "the shared store is unavailable; try again\n").into_response()
        }
    }
}

async fn start(State(state): State<Arc<AppState>>, RawQuery(q): RawQuery) -> Response {
    let Some(connections) = state.connections.as_ref() else { return StatusCode::NOT_FOUND.into_response() };
    let q = params(q);
    let sealer = state.sealer.load();
    let step = connections.start(&sealer, q.get("link").map(String::as_str)).await;
    answer(&state, step, &connections.config)
}

async fn callback(
    State(state): State<Arc<AppState>>,
    RawQuery(q): RawQuery,
    headers: axum::http::HeaderMap,
) -> Response {
    let Some(connections) = state.connections.as_ref() else { return StatusCode::NOT_FOUND.into_response() };
    let q = params(q);
    let sealer = state.sealer.load();
    let auth = state.auth.load();
    let browser = cookie(&headers, BROWSER_COOKIE);
    let step = connections.callback(&sealer, auth.as_deref(), &q, browser).await;
    answer(&state, step, &connections.config)
}

/// The value of cookie `name`, if the request carries it.
fn cookie<'a>(headers: &'a axum::http::HeaderMap, name: &str) -> Option<&'a str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find_map(|(k, v)| (k == name).then_some(v))
}

/// The query's parameters; of a name given twice, the first.
fn params(query: Option<String>) -> HashMap<String, String> {
    let mut out = HashMap::new();
    for (k, v) in url::form_urlencoded::parse(query.unwrap_or_default().as_bytes()) {
        out.entry(k.into_owned()).or_insert_with(|| v.into_owned());
    }
    out
}

fn answer(state: &AppState, step: Result<Step, Refusal>, config: &UserAuthConfig) -> Response {
    if let Err(r) = &step {
        state.metrics.count("mcp_user_auth_refused_total", &[("reason", r.reason)]);
    }
    let res = match step {
        Ok(Step::Redirect { to, bind }) => match HeaderValue::try_from(to) {
            Ok(location) => {
                let mut res = (StatusCode::FOUND, [(header::LOCATION, location)]).into_response();
                // The browser that signed in, for the upstream's answer (flow.rs).
                if let Some(b) = bind {
                    let secure = if config.public_url.starts_with("https://") { "; Secure" } else { "" };
                    let cookie = format!(
                        "{BROWSER_COOKIE}={b}; Path=/oauth/callback; Max-Age={}; HttpOnly; SameSite=Lax{secure}",
                        config.link_ttl.as_secs()
                    );
                    if let Ok(v) = HeaderValue::try_from(cookie) {
                        res.headers_mut().insert(header::SET_COOKIE, v);
                    }
                }
                res
            }
            Err(_) => {
                page(StatusCode::BAD_GATEWAY, "Not connected", "The authorization server's address is not usable.")
            }
        },
        Ok(Step::Connected { upstream }) => page(
            StatusCode::OK,
            "Connected",
            &format!(
                "Your {upstream} account is connected. Return to your agent and continue: it can now act as you there."
            ),
        ),
        Ok(Step::Manage { ticket }) => {
            let secure = if config.public_url.starts_with("https://") { "; Secure" } else { "" };
            let cookie = format!(
                "{TICKET_COOKIE}={ticket}; Path=/oauth/connections; Max-Age={TICKET_SECS}; HttpOnly; SameSite=Lax{secure}"
            );
            match (
                HeaderValue::try_from(format!("{}/oauth/connections", config.public_url)),
                HeaderValue::try_from(cookie),
            ) {
                (Ok(location), Ok(cookie)) => {
                    (StatusCode::SEE_OTHER, [(header::LOCATION, location), (header::SET_COOKIE, cookie)])
                        .into_response()
                }
                _ => page(StatusCode::INTERNAL_SERVER_ERROR, "Not signed in", "The sign-in could not be kept."),
            }
        }
        Err(r) => page(StatusCode::from_u16(r.status).unwrap_or(StatusCode::BAD_REQUEST), r.title, &r.message),
    };
    secured(res)
}

/// A page's headers: not cacheable, never framed, no referrer sent on, no script, forms only
/// to this origin.
fn secured(mut res: Response) -> Response {
    let headers = res.headers_mut();
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(
            "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'",
        ),
    );
    res
}

/// A small page for a person: a heading and one paragraph, readable on a phone.
fn page(status: StatusCode, title: &str, text: &str) -> Response {
    html(status, title, &format!("<p>{}</p>", escape(text)))
}

/// A page of `body` (HTML) under the heading `title`, readable on a phone.
fn html(status: StatusCode, title: &str, body: &str) -> Response {
    let body = format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><title>{title}</title>\
         <style>body{{font:16px/1.5 system-ui,sans-serif;max-width:36rem;margin:3rem auto;padding:0 1rem;color:#222}}\
         h1{{font-size:1.4rem}}code{{overflow-wrap:anywhere}}li{{margin:.5rem 0}}form{{display:inline-block;margin-left:.5rem}}\
         .t{{white-space:nowrap}}button{{font:inherit;padding:.2rem .8rem}}\
         .notice{{background:#eef6ee;padding:.5rem}}</style></head><body><h1>{title}</h1>{body}</body></html>"
    );
    (status, [(header::CONTENT_TYPE, "text/html; charset=utf-8")], body).into_response()
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}
