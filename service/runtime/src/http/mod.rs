//! The Streamable HTTP transport (MCP 2026-07-28 basic/transports/streamable-http): the router, the MCP endpoint and its ordered
//! checks, JSON / SSE replies, and serving it (plain or TLS) with a graceful stop. The only
//! module that knows axum, hyper and tower: below it, methods answer with a transport-neutral
//! [`Reply`](crate::rpc::Reply).
//!
//! - [`auth`]: bearer-token authentication and the protected-resource metadata.
//! - [`card`]: the SEP-2127 server card (a draft, off by default).
//! - [`console`]: the operator console (page, assets, admin-only JSON API, live feed), when enabled.
//! - [`cors`]: CORS for browser clients, from the same origin list as the DNS-rebinding check.
//! - [`endpoint`]: `POST /mcp` from bytes to a dispatched request.
//! - [`handover`]: long-lived HTTP/1.1 streams written outside hyper, without its buffers.
//! - [`head_timer`]: hyper's HTTP/1 head timeout on one timer per connection.
//! - [`inbound`]: the checks of MCP 2026-07-28 basic/transports/streamable-http § Sending messages to the server, in order, stopping at the first failure.
//! - [`legacy`]: 2025-era clients on the same endpoint (initialize, sealed sessions, GET stream).
//! - [`reply`]: a method's answer as JSON, error or SSE responses.
//! - [`layers`]: the protection stack in front of the endpoint.
//! - [`health`]: `/healthz`, `/readyz`, `/metrics`.
//! - [`server`]: the accept loop and the shutdown deadline.
//! - [`tls`]: rustls, ALPN, certificate reload.

pub mod auth;
pub mod card;
pub mod console;
pub mod cors;
pub mod endpoint;
pub mod handover;
pub mod head_timer;
pub mod health;
pub mod inbound;
pub mod layers;
pub mod legacy;
pub mod oauth;
pub mod reply;
pub mod server;
pub mod tls;

use std::convert::Infallible;
use std::future::Future;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes, HttpBody};
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::IntoResponse as _;
use axum::response::Response;
use axum::routing::get;
use futures_util::future::Either;
use tokio::net::TcpListener;
use tower::{Layer, Service};
use tower_http::cors::Cors;

use crate::config::ConsoleListener;
use crate::state::AppState;

/// What the main listener serves: `server.path` and the virtual endpoints' paths
/// (`[[endpoints]]`; any HTTP method: the endpoint answers 405 itself) straight to the MCP
/// endpoint behind its protection layers, everything else (the
/// probes, `/metrics` unless it has its own listener, the protected-resource metadata)
/// through an axum router. The MCP path skips the router: its path match, `MethodRouter` and
/// handler box cost ~7 % of a `tools/call` and decide nothing a string compare does not.
///
/// Requests with an `Origin` header (browsers) go through the CORS layer first, which also
/// answers their preflight; the others (every non-browser client) skip it.
#[derive(Clone)]
pub struct App {
    /// Behind one `Arc`: hyper clones the service for every request.
    shared: Arc<Shared>,
    /// This connection's peer (set per connection by the accept loop).
    peer: Option<std::net::SocketAddr>,
}

/// What every connection of a listener serves with.
struct Shared {
    path: Box<str>,
    /// Whose registry names the virtual endpoints (they follow a reload).
    state: Arc<AppState>,
    mcp: layers::Guard,
    /// Cloned (the CORS settings) only for requests that carry an `Origin`.
    browser: Cors<layers::Guard>,
    router: Router,
    /// The console is on this listener: router requests carry the peer (its loopback check).
    console: bool,
}

/// The main listener's service (see [`App`]).
pub fn app(state: Arc<AppState>) -> App {
    let cors = cors::layer(&state.server.origins);
    // RFC 9728 §3.1: the metadata of the resource at `/<path>` is at the well-known URI with
    // that path after it, for `server.path` and for each virtual endpoint.
    let router = Router::new()
        .route(
            "/.well-known/oauth-protected-resource/{*path}",
            get(|State(s): State<Arc<AppState>>, Path(rest): Path<String>| async move {
                let path = format!("/{rest}");
                let served = path == s.server.path || s.registry.load().endpoint(&path).is_some();
                if served {
                    auth::metadata(s.auth.load().as_deref(), &path)
                } else {
                    StatusCode::NOT_FOUND.into_response()
                }
            })
            .layer(cors.clone()),
        )
        .merge(health::routes(!state.separate_metrics))
        .merge(card::routes(&state.server.path));
    let router = if state.connections.is_some() { router.merge(oauth::routes()) } else { router };
    // Off: no route at all. On: its own routes beside the probes, never on the MCP path.
    let here = console_on(&state, ConsoleListener::Main);
    let router = match state.console.as_ref().filter(|_| here) {
        Some(c) => router.merge(console::routes(&state, &c.config.path)),
        None => router,
    };
    let router = router.with_state(Arc::clone(&state));
    let mcp = layers::protect(&state);
    let shared = Shared {
        path: state.server.path.as_str().into(),
        state: Arc::clone(&state),
        browser: cors.layer(mcp.clone()),
        mcp,
        router,
        console: here,
    };
    App { shared: Arc::new(shared), peer: None }
}

fn console_on(state: &AppState, listener: ConsoleListener) -> bool {
    state.console.as_ref().is_some_and(|c| c.config.listener == listener)
}

impl server::PerConnection for App {
    fn for_peer(&self, peer: std::net::SocketAddr) -> Self {
        Self { shared: Arc::clone(&self.shared), peer: self.shared.console.then_some(peer) }
    }
}

impl<B> Service<axum::http::Request<B>> for App
where
    B: HttpBody<Data = Bytes> + Send + 'static,
    B::Error: Into<axum::BoxError>,
{
    type Response = Response;
    type Error = Infallible;
    type Future = Either<
        Either<
            <layers::Guard as Service<axum::extract::Request>>::Future,
            <Cors<layers::Guard> as Service<axum::extract::Request>>::Future,
        >,
        <Router as Service<axum::http::Request<B>>>::Future,
    >;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        // Both sides are always ready (the guard sheds load itself, with a 503).
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: axum::http::Request<B>) -> Self::Future {
        let shared = &*self.shared;
        let path = req.uri().path();
        if path == &*shared.path || shared.state.registry.load().endpoint(path).is_some() {
            if req.headers().contains_key(axum::http::header::ORIGIN) {
                Either::Left(Either::Right(Cors::clone(&shared.browser).call(req.map(Body::new))))
            } else {
                Either::Left(Either::Left(shared.mcp.serve(req.map(Body::new))))
            }
        } else {
            let mut req = req;
            if let Some(peer) = self.peer {
                req.extensions_mut().insert(axum::extract::ConnectInfo(peer));
            }
            Either::Right(shared.router.clone().call(req))
        }
    }
}

/// The router of the separate metrics listener: `/metrics`, the probes and, when configured
/// there, the console.
pub fn admin(state: Arc<AppState>) -> Admin {
    let router = health::routes(true);
    let here = console_on(&state, ConsoleListener::Metrics);
    let router = match state.console.as_ref().filter(|_| here) {
        Some(c) => router.merge(console::routes(&state, &c.config.path)),
        None => router,
    };
    Admin { router: router.with_state(state), peer: None }
}

/// The metrics listener's service: its router, told each connection's peer.
#[derive(Clone)]
pub struct Admin {
    router: Router,
    peer: Option<std::net::SocketAddr>,
}

impl server::PerConnection for Admin {
    fn for_peer(&self, peer: std::net::SocketAddr) -> Self {
        Self { router: self.router.clone(), peer: Some(peer) }
    }
}

impl<B> Service<axum::http::Request<B>> for Admin
where
    B: HttpBody<Data = Bytes> + Send + 'static,
    B::Error: Into<axum::BoxError>,
{
    type Response = Response;
    type Error = Infallible;
    type Future = <Router as Service<axum::http::Request<B>>>::Future;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, mut req: axum::http::Request<B>) -> Self::Future {
        if let Some(peer) = self.peer {
            req.extensions_mut().insert(axum::extract::ConnectInfo(peer));
        }
        self.router.call(req)
    }
}

/// Where to serve.
#[derive(Debug)]
pub struct Listeners {
    /// The MCP endpoint.
    pub main: TcpListener,
    /// TLS on the main listener.
    pub tls: Option<tls::Tls>,
    /// `telemetry.metrics_listen`.
    pub metrics: Option<TcpListener>,
}

/// Serves plain HTTP until `shutdown` resolves (see [`serve_with`]).
pub async fn serve(
    listener: TcpListener,
    state: Arc<AppState>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    serve_with(Listeners { main: listener, tls: None, metrics: None }, state, shutdown).await
}

/// Serves until `shutdown` resolves; then stops accepting, closes listen streams with their
/// final response, lets in-flight calls finish within `server.shutdown_grace_ms` and
/// cancels what is left.
pub async fn serve_with(
    listeners: Listeners,
    state: Arc<AppState>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let stop = state.shutdown.clone();
    tokio::spawn(async move {
        shutdown.await;
        stop.cancel();
    });
    if let Some(tls) = &listeners.tls {
        tls.spawn_reload(state.shutdown.clone());
    }
    spawn_upkeep(&state);
    crate::console::sample::spawn(&state);
    crate::console::approvals::spawn_sync(&state);
    let grace = state.server.shutdown_grace;
    let limits = server::ConnLimits {
        header_read_timeout: state.limits.header_read_timeout,
        max_connections: state.limits.max_connections,
    };
    let main =
        server::run(listeners.main, listeners.tls, app(Arc::clone(&state)), state.shutdown.clone(), grace, limits);
    match listeners.metrics {
        None => main.await,
        Some(listener) => {
            let admin = server::run(listener, None, admin(Arc::clone(&state)), state.shutdown.clone(), grace, limits);
            let (a, b) = tokio::join!(main, admin);
            a.and(b)
        }
    }
}

/// Folds histogram samples every few seconds, so memory stays flat without scrapes.
fn spawn_upkeep(state: &Arc<AppState>) {
    let state = Arc::clone(state);
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(Duration::from_secs(5));
        loop {
            tokio::select! {
                () = state.shutdown.cancelled() => return,
                _ = tick.tick() => state.metrics.upkeep(),
            }
        }
    });
}
