//! What the adapter benchmarks share: a loopback upstream, timing and percentile rows.
//! Included by path (`#[path = ...] mod support;`) from `added_latency.rs` here and from the
//! OpenAPI adapter's `vs_rest.rs`, so both measure against the same upstream the same way.

use std::future::Future;
use std::time::Instant;

use axum::extract::Path;
use serde_json::json;

pub async fn timed(f: impl Future<Output = ()>) -> f64 {
    let start = Instant::now();
    f.await;
    start.elapsed().as_nanos() as f64
}

/// p50, p90, p99 in microseconds.
pub fn percentiles(mut ns: Vec<f64>) -> [f64; 3] {
    ns.sort_by(f64::total_cmp);
    let at = |p: f64| ns[((ns.len() - 1) as f64 * p).round() as usize] / 1_000.0;
    [at(0.50), at(0.90), at(0.99)]
}

pub fn row(label: &str, v: [f64; 3]) {
    println!("{label:<38}{:>9.1}{:>9.1}{:>9.1}", v[0], v[1], v[2]);
}

/// Token requests the upstream's `/token` answered.
#[allow(dead_code, reason = "read by the token exchange bench only")]
pub static TOKEN_REQUESTS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// A small JSON API (`GET /items/{id}`, and `POST /token` for token exchange) on its own
/// runtime thread.
pub fn start_upstream() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    listener.set_nonblocking(true).expect("nonblocking");
    let base = format!("http://{}", listener.local_addr().expect("addr"));
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("upstream runtime");
        rt.block_on(async move {
            let app = axum::Router::new()
                .route(
                    "/items/{id}",
                    axum::routing::get(|Path(id): Path<String>| async move {
                        axum::Json(json!({"id": id, "name": "An item", "tags": ["a", "b"], "price": 12.5}))
                    }),
                )
                // A token endpoint answering every RFC 8693 exchange with an hour's token.
                .route(
                    "/token",
                    axum::routing::post(|| async {
                        TOKEN_REQUESTS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        axum::Json(json!({"access_token": "exchanged-token-0123456789", "token_type": "Bearer",
                                          "expires_in": 3600, "issued_token_type":
                                          "urn:ietf:params:oauth:token-type:access_token"}))
                    }),
                );
            let listener = tokio::net::TcpListener::from_std(listener).expect("listener");
            axum::serve(listener, app).await.expect("serve");
        });
    });
    base
}
