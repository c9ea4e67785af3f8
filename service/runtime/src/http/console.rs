//! The operator console over HTTP: the page and its static assets (embedded in the binary),
//! its JSON API under `<path>/api/` and the live feed `<path>/api/events` (SSE). Routed only
//! when `[console]` is enabled; then every answer is refused to non-loopback peers (unless
//! `console.allow_remote`), carries a strict Content-Security-Policy, and the API needs the
//! MCP endpoint's bearer authentication plus an administrator (`console.admin_*`). No
//! cookies: the page sends the token in `Authorization` itself, so no other site can make a
//! browser call the API on an operator's behalf.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::{ConnectInfo, Path, Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use futures_util::stream::{self, Stream};
use serde_json::{Value, json};

use crate::console::{self, views};
use crate::state::AppState;

/// The page's policy: its own scripts, styles and API only; no inline code, no framing.
const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; \
                   connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/// How often the live feed sends the open page's data.
const FEED_EVERY: Duration = Duration::from_secs(2);

/// The assets: name, content type, bytes (written by hand, no build step).
const ASSETS: &[(&str, &str, &str)] = &[
    ("console.css", "text/css; charset=utf-8", include_str!("../../console/console.css")),
    ("app.js", "text/javascript; charset=utf-8", include_str!("../../console/app.js")),
    ("pages.js", "text/javascript; charset=utf-8", include_str!("../../console/pages.js")),
    ("chart.js", "text/javascript; charset=utf-8", include_str!("../../console/chart.js")),
    ("form.js", "text/javascript; charset=utf-8", include_str!("../../console/form.js")),
    ("playground.js", "text/javascript; charset=utf-8", include_str!("../../console/playground.js")),
    ("catalog.js", "text/javascript; charset=utf-8", include_str!("../../console/catalog.js")),
    ("connections.js", "text/javascript; charset=utf-8", include_str!("../../console/connections.js")),
    ("explore.js", "text/javascript; charset=utf-8", include_str!("../../console/explore.js")),
    ("mcp.js", "text/javascript; charset=utf-8", include_str!("../../console/mcp.js")),
    ("search.js", "text/javascript; charset=utf-8", include_str!("../../console/search.js")),
    ("ui.js", "text/javascript; charset=utf-8", include_str!("../../console/ui.js")),
];

const INDEX: &str = include_str!("../../console/index.html");

/// The console's routes under `path`, behind the peer, authentication and header checks.
pub fn routes(state: &Arc<AppState>, path: &str) -> Router<Arc<AppState>> {
    let api = Router::new()
        .route("/overview", get(|State(s): State<Arc<AppState>>| async move { json_of(views::overview(&s).await) }))
        .route("/catalog", get(|State(s): State<Arc<AppState>>| async move { json_of(views::catalog(&s)) }))
        .route("/adapters", get(|State(s): State<Arc<AppState>>| async move { json_of(views::adapters(&s)) }))
        .route("/endpoints", get(|State(s): State<Arc<AppState>>| async move { json_of(views::endpoints(&s)) }))
        .route("/pins/approve", post(approve))
        .route(
            "/connections",
            get(|State(s): State<Arc<AppState>>| async move { json_of(views::connections(&s).await) }),
        )
        .route("/connections/revoke", post(revoke))
        .route(
            "/calls",
            get(|State(s): State<Arc<AppState>>, req: Request| async move {
                json_of(views::calls(&s, &query_param(req.uri(), "chart").unwrap_or_default()))
            }),
        )
        .route("/config", get(|State(s): State<Arc<AppState>>| async move { json_of(views::config(&s)) }))
        .route("/events", get(events))
        .layer(middleware::from_fn_with_state(Arc::clone(state), admin_only));
    let base = path.to_owned();
    let site = Router::new()
        .route(path, get(move || async move { Redirect::permanent(&format!("{base}/")) }))
        .route(&format!("{path}/"), get(index))
        .route(&format!("{path}/assets/{{file}}"), get(asset))
        .nest(&format!("{path}/api"), api);
    site.layer(middleware::from_fn_with_state(Arc::clone(state), guard))
}

async fn index(State(state): State<Arc<AppState>>) -> Response {
    let on_main = state.console.as_ref().is_some_and(|c| c.config.listener == crate::config::ConsoleListener::Main);
    // The MCP endpoint for the playground, as data (never as script).
    let mcp = if on_main { state.server.path.as_str() } else { "" };
    let page = INDEX.replace("{{MCP_PATH}}", &html_attr(mcp));
    ([(header::CONTENT_TYPE, "text/html; charset=utf-8")], page).into_response()
}

async fn asset(Path(file): Path<String>) -> Response {
    match ASSETS.iter().find(|(name, _, _)| *name == file) {
        Some((_, ty, body)) => ([(header::CONTENT_TYPE, *ty)], *body).into_response(),
        None => problem(StatusCode::NOT_FOUND, &format!("no console asset named '{file}'")),
    }
}

fn json_of(v: Value) -> Response {
    axum::Json(v).into_response()
}

/// `POST api/pins/approve {"key", "sha256"}`: an administrator approves the definition shown
/// (`[pinning]`); refused when it is not awaiting approval or changed since it was shown.
async fn approve(
    State(state): State<Arc<AppState>>,
    axum::Extension(admin): axum::Extension<mcp_adapter_api::Identity>,
    body: axum::body::Bytes,
) -> Response {
    #[derive(serde::Deserialize)]
    struct Approval {
        key: String,
        sha256: String,
    }
    let Ok(a) = serde_json::from_slice::<Approval>(&body) else {
        return problem(
            StatusCode::BAD_REQUEST,
            "send {\"key\": ..., \"sha256\": ...}: the definition's key and the digest shown",
        );
    };
    match console::approvals::approve(&state, &a.key, &a.sha256).await {
        Ok(()) => {
            tracing::warn!(subject = %admin.subject, item = %a.key, sha256 = %a.sha256, "console: definition approved; pin it (`mcp-runtime pin`) to keep it approved in the lock file");
            json_of(json!({"approved": a.key}))
        }
        Err(e) => problem(StatusCode::CONFLICT, &e.to_string()),
    }
}

/// `POST api/connections/revoke {"caller", "upstream"}`: an administrator removes a caller's
/// connection to an upstream (`[user_auth]`); the caller is asked to connect again.
async fn revoke(
    State(state): State<Arc<AppState>>,
    axum::Extension(admin): axum::Extension<mcp_adapter_api::Identity>,
    body: axum::body::Bytes,
) -> Response {
    #[derive(serde::Deserialize)]
    struct Revoke {
        caller: String,
        upstream: String,
    }
    let Some(connections) = &state.connections else {
        return problem(StatusCode::NOT_FOUND, "no [user_auth] is configured: there are no connections to remove");
    };
    let Ok(r) = serde_json::from_slice::<Revoke>(&body) else {
        return problem(
            StatusCode::BAD_REQUEST,
            "send {\"caller\": ..., \"upstream\": ...}: the connection's caller and upstream as listed",
        );
    };
    match connections.revoke(&admin, &r.caller, &r.upstream).await {
        Ok(()) => json_of(json!({"removed": {"caller": r.caller, "upstream": r.upstream}})),
        Err(crate::connect::Disconnect::Unknown) => {
            problem(StatusCode::NOT_FOUND, &format!("no upstream '{}' is configured here", r.upstream))
        }
        Err(crate::connect::Disconnect::Unavailable) => {
            problem(StatusCode::SERVICE_UNAVAILABLE, "the shared store (Redis) is unavailable; try again")
        }
    }
}

/// `{"error": message}` with `status`.
fn problem(status: StatusCode, message: &str) -> Response {
    (status, axum::Json(json!({ "error": message }))).into_response()
}

/// The value of `key` in the request's query (`+` and percent escapes decoded).
fn query_param(uri: &axum::http::Uri, key: &str) -> Option<String> {
    uri.query()?.split('&').find_map(|pair| {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        (k == key).then(|| percent_encoding::percent_decode_str(&v.replace('+', " ")).decode_utf8_lossy().into_owned())
    })
}

fn html_attr(s: &str) -> String {
    s.replace('&', "&amp;").replace('"', "&quot;").replace('<', "&lt;").replace('>', "&gt;")
}

/// Every console answer: loopback peers only (unless allowed), then the security headers.
async fn guard(State(state): State<Arc<AppState>>, req: Request, next: Next) -> Response {
    let Some(console) = &state.console else { return problem(StatusCode::NOT_FOUND, "the console is not enabled") };
    if !console.config.allow_remote {
        let peer = req.extensions().get::<ConnectInfo<SocketAddr>>().map(|c| c.0.ip().to_canonical());
        if !peer.is_some_and(|ip| ip.is_loopback()) {
            tracing::warn!(peer = ?peer, "console request from a non-loopback peer refused");
            return with_headers(problem(
                StatusCode::FORBIDDEN,
                "the console answers loopback peers only; set console.allow_remote = true to open it further",
            ));
        }
    }
    with_headers(next.run(req).await)
}

fn with_headers(mut res: Response) -> Response {
    let h = res.headers_mut();
    h.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(CSP));
    h.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    h.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    res
}

/// The API: the MCP endpoint's bearer authentication, then the administrator rule.
async fn admin_only(State(state): State<Arc<AppState>>, req: Request, next: Next) -> Response {
    let Some(console) = &state.console else { return problem(StatusCode::NOT_FOUND, "the console is not enabled") };
    let auth = state.auth.load();
    // The path as the browser asked for it (the nested router sees it without the prefix).
    let path = format!("{}/api{}", console.config.path, req.uri().path());
    let challenge = |res: Response, error: bool| {
        let mut res = res;
        let value = if error {
            "Bearer realm=\"mcp-console\", error=\"invalid_token\""
        } else {
            "Bearer realm=\"mcp-console\""
        };
        res.headers_mut().insert(header::WWW_AUTHENTICATE, HeaderValue::from_static(value));
        res
    };
    match super::auth::authenticate(auth.as_deref(), req.uri(), req.headers(), std::time::Instant::now()).await {
        Ok(Some(identity)) if console::is_admin(&console.config, &identity) => {
            // Who acts, for the handlers that change something (their log line names them).
            let mut req = req;
            req.extensions_mut().insert(identity);
            next.run(req).await
        }
        Ok(Some(identity)) => {
            tracing::warn!(subject = %identity.subject, %path, "console: not an administrator");
            problem(
                StatusCode::FORBIDDEN,
                &format!(
                    "'{}' is not a console administrator (console.admin_subjects, admin_scopes, admin_claims)",
                    identity.subject
                ),
            )
        }
        Ok(None) => {
            tracing::warn!(%path, "console request refused: the configuration has no [auth]");
            problem(
                StatusCode::SERVICE_UNAVAILABLE,
                "the configuration has no [auth]: the console stays closed until it does",
            )
        }
        Err(rejected) => {
            // Logged like a refusal at the MCP endpoint: a wrong token on the console is as
            // much worth an operator's attention (someone guessing, a stale token).
            tracing::warn!(reason = rejected.reason(), error = %rejected, %path, "console: bearer token refused");
            let had_token = rejected.had_token();
            challenge(problem(StatusCode::UNAUTHORIZED, &format!("Unauthorized: {rejected}")), had_token)
        }
    }
}

/// What the live feed streams: the page open in the browser, so that nothing else is built.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Feed {
    Overview,
    Adapters,
    Calls,
}

/// The live feed `events?view=overview|adapters|calls[&chart=FILTER]`: every [`FEED_EVERY`]
/// one `update` event with that page's data under its name; it ends at shutdown.
async fn events(State(state): State<Arc<AppState>>, req: Request) -> Response {
    let view = query_param(req.uri(), "view").unwrap_or_default();
    let feed = match view.as_str() {
        "overview" => Feed::Overview,
        "adapters" => Feed::Adapters,
        "calls" => Feed::Calls,
        other => {
            return problem(
                StatusCode::BAD_REQUEST,
                &format!("no live view named '{other}': view=overview, adapters or calls"),
            );
        }
    };
    let chart = query_param(req.uri(), "chart").unwrap_or_default();
    Sse::new(updates(state, feed, chart)).keep_alive(KeepAlive::default()).into_response()
}

fn updates(
    state: Arc<AppState>,
    feed: Feed,
    chart: String,
) -> impl Stream<Item = Result<Event, std::convert::Infallible>> {
    stream::unfold((state, true), move |(state, first)| {
        let chart = chart.clone();
        async move {
            if !first {
                tokio::select! {
                    () = state.shutdown.cancelled() => return None,
                    () = tokio::time::sleep(FEED_EVERY) => {}
                }
            }
            let data = match feed {
                Feed::Overview => json!({"overview": views::overview(&state).await}),
                Feed::Adapters => json!({"adapters": views::adapters(&state)}),
                Feed::Calls => json!({"calls": views::calls(&state, &chart)}),
            };
            let event = Event::default().event("update").data(data.to_string());
            Some((Ok(event), (state, false)))
        }
    })
}

#[cfg(test)]
mod tests {
    use std::net::SocketAddr;

    use axum::body::Body;
    use tower::ServiceExt as _;

    use crate::Config;
    use crate::http::server::PerConnection as _;
    use crate::state::AppState;

    const ADMIN: &str = "admin-token-0123456789";
    const BASE: &str = "[[adapters]]\nkind = \"fixtures\"\nset = \"demo\"\n[[auth.tokens]]\nsubject = \"ops\"\nsecret = \"admin-token-0123456789\"\n";

    /// Status and body of `GET path` from `peer` on the main listener's service.
    async fn get(config: &str, peer: &str, path: &str, token: Option<&str>) -> (u16, String) {
        let state = AppState::build(&Config::from_toml(config).unwrap()).await.unwrap();
        let app = crate::http::app(state).for_peer(peer.parse::<SocketAddr>().unwrap());
        let mut req = axum::http::Request::get(path);
        if let Some(t) = token {
            req = req.header("authorization", format!("Bearer {t}"));
        }
        let res = app.oneshot(req.body(Body::empty()).unwrap()).await.unwrap();
        let status = res.status().as_u16();
        let body = http_body_util::BodyExt::collect(res.into_body()).await.unwrap().to_bytes();
        (status, String::from_utf8_lossy(&body).into_owned())
    }

    #[test]
    fn query_parameters_are_decoded() {
        let uri: axum::http::Uri = "/console/api/calls?view=calls&chart=bulk%5F00+7&x".parse().unwrap();
        assert_eq!(super::query_param(&uri, "chart").as_deref(), Some("bulk_00 7"));
        assert_eq!(super::query_param(&uri, "x").as_deref(), Some(""));
        assert_eq!(super::query_param(&uri, "nope"), None);
    }

    #[tokio::test]
    async fn off_by_default_there_is_no_console_route() {
        let (status, _) = get(BASE, "127.0.0.1:5000", "/console/", None).await;
        assert_eq!(status, 404);
        let (status, _) = get(BASE, "127.0.0.1:5000", "/console/api/overview", Some(ADMIN)).await;
        assert_eq!(status, 404);
    }

    #[tokio::test]
    async fn on_it_answers_loopback_peers_only_unless_allowed() {
        let on = format!("{BASE}[console]\nenabled = true\nadmin_subjects = [\"ops\"]\n");
        let (status, body) = get(&on, "127.0.0.1:5000", "/console/", None).await;
        assert_eq!(status, 200, "{body}");
        assert!(body.contains("data-mcp-path=\"/mcp\""), "{body}");
        let (status, _) = get(&on, "[::1]:5000", "/console/api/overview", Some(ADMIN)).await;
        assert_eq!(status, 200);
        let (status, body) = get(&on, "192.0.2.7:5000", "/console/", None).await;
        assert_eq!(status, 403);
        assert!(body.contains("console.allow_remote"), "the refusal names the setting: {body}");
        let open = format!("{on}allow_remote = true\n");
        let (status, _) = get(&open, "192.0.2.7:5000", "/console/api/overview", Some(ADMIN)).await;
        assert_eq!(status, 200);
        let (status, body) = get(&open, "192.0.2.7:5000", "/console/api/overview", None).await;
        assert_eq!(status, 401, "{body}");
    }
}
