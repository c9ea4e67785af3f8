//! The REST adapter against three real HTTP upstreams on loopback: round-robin, ejection and
//! return of a killed upstream, retries that never repeat a POST, `Retry-After`, path values
//! that cannot traverse, credentials that reach the upstream and nothing else, redirects
//! that stay on the host, the response mapping, and the shared adapter-conformance check.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use mcp_e2e::adapter_conformance::{self, AdapterUnderTest};
use mcp_e2e::schema::assert_response;
use mcp_e2e::{Answer, Server, paths};
use serde_json::{Value, json};

/// What an upstream received: method, path and query exactly as sent, headers.
#[derive(Debug, Clone)]
struct Seen {
    method: Method,
    target: String,
    headers: HeaderMap,
}

/// Counters shared by the three upstreams of a test.
#[derive(Debug, Default)]
struct Shared {
    /// `/flaky` answers 503 while this is above zero (whichever upstream gets it).
    flaky: AtomicUsize,
    /// `/limited` answers 429 with `Retry-After: 1` while this is above zero.
    limited: AtomicUsize,
    /// `/slow` requests that started, and those whose request was abandoned mid-way.
    slow_started: AtomicUsize,
    slow_abandoned: AtomicUsize,
}

fn take(budget: &AtomicUsize) -> bool {
    budget.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1)).is_ok()
}

#[derive(Debug)]
struct UpState {
    name: &'static str,
    port: u16,
    seen: Mutex<Vec<Seen>>,
    shared: Arc<Shared>,
}

/// Marks a `/slow` request abandoned when its handler future is dropped before the end:
/// hyper drops it when the client closes the connection.
struct Abandoned(Arc<Shared>);

impl Drop for Abandoned {
    fn drop(&mut self) {
        self.0.slow_abandoned.fetch_add(1, Ordering::SeqCst);
    }
}

async fn handle(State(s): State<Arc<UpState>>, method: Method, uri: Uri, headers: HeaderMap) -> Response {
    let target = uri.path_and_query().map(ToString::to_string).unwrap_or_default();
    s.seen.lock().unwrap().push(Seen { method, target: target.clone(), headers: headers.clone() });
    let json = |v: Value| ([(header::CONTENT_TYPE, "application/json")], v.to_string()).into_response();
    let path = uri.path();
    match path {
        "/health" => "ok".into_response(),
        "/who" => json(json!({"upstream": s.name})),
        "/flaky" if take(&s.shared.flaky) => (StatusCode::SERVICE_UNAVAILABLE, "busy, try again").into_response(),
        "/flaky" => json(json!({"upstream": s.name})),
        "/limited" if take(&s.shared.limited) => {
            (StatusCode::TOO_MANY_REQUESTS, [(header::RETRY_AFTER, "1")], "slow down").into_response()
        }
        "/limited" => json(json!({"upstream": s.name})),
        "/limited-long" => (StatusCode::TOO_MANY_REQUESTS, [(header::RETRY_AFTER, "30")], "later").into_response(),
        // Same server, another host name: a different origin.
        "/redirect-away" => {
            let to = format!("http://localhost:{}/stolen", s.port);
            (StatusCode::FOUND, [(header::LOCATION, to)]).into_response()
        }
        "/redirect-here" => (StatusCode::FOUND, [(header::LOCATION, "/who")]).into_response(),
        "/stolen" => "you should not be here".into_response(),
        "/secret" => {
            let authorized = headers.get(header::AUTHORIZATION).is_some_and(|v| v == "Bearer s3cr3t-t0ken");
            json(json!({"authorized": authorized}))
        }
        "/image" => ([(header::CONTENT_TYPE, "image/png")], vec![0x89, b'P', b'N', b'G']).into_response(),
        "/slow" => {
            s.shared.slow_started.fetch_add(1, Ordering::SeqCst);
            let guard = Abandoned(Arc::clone(&s.shared));
            tokio::time::sleep(Duration::from_secs(60)).await;
            std::mem::forget(guard);
            "finally".into_response()
        }
        p if p.starts_with("/items/") => json(json!({"path": target})),
        p if p.starts_with("/status/") => {
            let code = p["/status/".len()..].parse().unwrap_or(500);
            (StatusCode::from_u16(code).unwrap(), "upstream says no: details here").into_response()
        }
        _ => StatusCode::NOT_FOUND.into_response(),
    }
}

/// One upstream with its own Tokio runtime, so killing it closes every socket it holds
/// (listener and keep-alive connections), like a crashed process.
struct Upstream {
    state: Arc<UpState>,
    runtime: Option<tokio::runtime::Runtime>,
}

impl Upstream {
    fn start(name: &'static str, shared: &Arc<Shared>) -> Self {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let state = Arc::new(UpState { name, port, seen: Mutex::default(), shared: Arc::clone(shared) });
        let mut up = Self { state, runtime: None };
        up.serve(listener);
        up
    }

    fn serve(&mut self, listener: std::net::TcpListener) {
        listener.set_nonblocking(true).unwrap();
        let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
        let app = axum::Router::new().fallback(handle).with_state(Arc::clone(&self.state));
        runtime.spawn(async move {
            let listener = tokio::net::TcpListener::from_std(listener).unwrap();
            axum::serve(listener, app).await.unwrap();
        });
        self.runtime = Some(runtime);
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.state.port)
    }

    fn kill(&mut self) {
        self.runtime.take().expect("running").shutdown_background();
    }

    /// Starts again on the same port (std sets SO_REUSEADDR on Unix listeners).
    fn restart(&mut self) {
        let end = Instant::now() + Duration::from_secs(5);
        let listener = loop {
            match std::net::TcpListener::bind(("127.0.0.1", self.state.port)) {
                Ok(l) => break l,
                Err(e) if Instant::now() < end => {
                    eprintln!("rebinding {}: {e}", self.state.port);
                    std::thread::sleep(Duration::from_millis(50));
                }
                Err(e) => panic!("cannot rebind port {}: {e}", self.state.port),
            }
        };
        self.serve(listener);
    }

    fn seen(&self) -> Vec<Seen> {
        self.state.seen.lock().unwrap().clone()
    }

    /// Requests for `path` (path and query as received).
    fn hits(&self, target: &str) -> usize {
        self.seen().iter().filter(|s| s.target == target).count()
    }
}

impl Drop for Upstream {
    fn drop(&mut self) {
        if let Some(rt) = self.runtime.take() {
            rt.shutdown_background();
        }
    }
}

/// Three upstreams sharing counters.
fn three() -> (Arc<Shared>, Vec<Upstream>) {
    let shared = Arc::new(Shared::default());
    let ups = ["a", "b", "c"].into_iter().map(|n| Upstream::start(n, &shared)).collect();
    (shared, ups)
}

fn hits(ups: &[Upstream], target: &str) -> usize {
    ups.iter().map(|u| u.hits(target)).sum()
}

/// The tools of `tests/fixtures/rest-tools.toml`, one per upstream behaviour under test.
fn tools() -> String {
    let path = paths::repo().join("tests/fixtures/rest-tools.toml");
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()))
}

/// A runtime config serving [`tools`] from `ups`; `adapter_extra` goes into the
/// `[[adapters]]` table (before the tools).
fn config(ups: &[Upstream], adapter_extra: &str) -> String {
    let urls: Vec<String> = ups.iter().map(|u| format!("\"{}\"", u.url())).collect();
    format!(
        r#"
[server]
call_timeout_ms = 10000

[[adapters]]
name = "api"
kind = "rest"
base_urls = [{}]
auth = {{ kind = "bearer", secret_env = "UPSTREAM_TOKEN" }}
retry = {{ max_attempts = 3, initial_backoff_ms = 20, max_backoff_ms = 200 }}
ejection = {{ consecutive_failures = 2, eject_ms = 60000 }}
{adapter_extra}
{}"#,
        urls.join(", "),
        tools()
    )
}

const TOKEN_ENV: (&str, &str) = ("UPSTREAM_TOKEN", "s3cr3t-t0ken");

fn start(ups: &[Upstream], adapter_extra: &str) -> Server {
    Server::start_with(&config(ups, adapter_extra), &[TOKEN_ENV])
}

/// A successful tool call: valid against the schema, not an error.
fn ok(a: &Answer) -> &Value {
    assert_response("tools/call", a.message());
    assert_ne!(a.result()["isError"], true, "{:?}", a.messages);
    a.result()
}

#[tokio::test]
async fn calls_are_spread_round_robin() {
    let (_shared, ups) = three();
    let server = start(&ups, "");
    let mcp = server.mcp();
    for _ in 0..30 {
        ok(&mcp.tool("who", json!({})).await);
    }
    let counts: Vec<usize> = ups.iter().map(|u| u.hits("/who")).collect();
    assert_eq!(counts, [10, 10, 10]);
}

#[tokio::test]
async fn a_killed_upstream_is_ejected_and_the_health_check_brings_it_back() {
    let (_shared, mut ups) = three();
    // Ejection lasts a minute: only the health check can bring the upstream back in time.
    let health = r#"health_check = { path = "/health", interval_ms = 100, timeout_ms = 500 }"#;
    // Info level: restoration is logged at info.
    let server = Server::start_with(&config(&ups, health), &[TOKEN_ENV, ("RUST_LOG", "info")]);
    let mcp = server.mcp();
    ups[1].kill();
    for _ in 0..20 {
        let a = mcp.tool("who", json!({})).await;
        assert_ne!(ok(&a)["structuredContent"]["upstream"], "b");
    }
    server.log_line("upstream ejected").await;
    assert_eq!(ups[1].hits("/who"), 0);

    ups[1].restart();
    let end = Instant::now() + Duration::from_secs(10);
    while ups[1].hits("/who") == 0 {
        assert!(Instant::now() < end, "the restarted upstream never got traffic again");
        ok(&mcp.tool("who", json!({})).await);
    }
    assert!(ups[1].hits("/health") > 0, "the health check probes the upstream");
    server.log_line("upstream restored").await;
}

#[tokio::test]
async fn an_ejected_upstream_returns_after_eject_ms_without_a_health_check() {
    let (_shared, mut ups) = three();
    let cfg = config(&ups, "").replace("eject_ms = 60000", "eject_ms = 300");
    let server = Server::start_with(&cfg, &[TOKEN_ENV]);
    let mcp = server.mcp();
    ups[2].kill();
    for _ in 0..9 {
        ok(&mcp.tool("who", json!({})).await);
    }
    ups[2].restart();
    tokio::time::sleep(Duration::from_millis(400)).await;
    for _ in 0..6 {
        ok(&mcp.tool("who", json!({})).await);
    }
    assert!(ups[2].hits("/who") > 0, "the upstream is back in rotation after eject_ms");
}

#[tokio::test]
async fn retries_repeat_a_get_but_never_a_post() {
    let (shared, ups) = three();
    let server = start(&ups, "");
    let mcp = server.mcp();

    shared.flaky.store(1, Ordering::SeqCst);
    ok(&mcp.tool("flaky_get", json!({})).await);
    assert_eq!(hits(&ups, "/flaky"), 2, "the GET was retried once after the 503");

    shared.flaky.store(1, Ordering::SeqCst);
    let a = mcp.tool("flaky_post", json!({"x": 1})).await;
    assert_response("tools/call", a.message());
    assert_eq!(a.result()["isError"], true);
    assert!(a.text(0).starts_with("HTTP 503 Service Unavailable: busy"), "{}", a.text(0));
    let posts: usize =
        ups.iter().map(|u| u.seen().iter().filter(|s| s.method == Method::POST && s.target == "/flaky").count()).sum();
    assert_eq!(posts, 1, "the POST was sent exactly once");
}

#[tokio::test]
async fn retry_after_is_honoured_within_the_deadline() {
    let (shared, ups) = three();
    let server = start(&ups, "");
    let mcp = server.mcp();

    shared.limited.store(1, Ordering::SeqCst);
    let started = Instant::now();
    ok(&mcp.tool("limited", json!({})).await);
    assert!(started.elapsed() >= Duration::from_secs(1), "waited {:?}, Retry-After said 1 s", started.elapsed());
    assert_eq!(hits(&ups, "/limited"), 2);

    // Retry-After: 30 s does not fit a 3 s deadline: the 429 is the answer, at once.
    let started = Instant::now();
    let a = mcp.tool("limited_long", json!({})).await;
    assert!(started.elapsed() < Duration::from_secs(2), "{:?}", started.elapsed());
    assert_eq!(a.result()["isError"], true);
    assert!(a.text(0).contains("HTTP 429") && a.text(0).contains("Retry-After: 30 s"), "{}", a.text(0));
    assert_eq!(hits(&ups, "/limited-long"), 1);
}

#[tokio::test]
async fn path_values_are_one_encoded_segment_or_refused() {
    let (_shared, ups) = three();
    let server = start(&ups, "");
    let mcp = server.mcp();
    let cases = [
        ("../admin", "/items/..%2Fadmin"),
        ("a/b", "/items/a%2Fb"),
        ("%2e%2e", "/items/%252e%252e"),
        ("..%2fadmin", "/items/..%252fadmin"),
        ("x?admin=1#frag", "/items/x%3Fadmin%3D1%23frag"),
        ("@evil.example:80", "/items/%40evil.example%3A80"),
    ];
    for (id, received) in cases {
        let a = mcp.tool("get_item", json!({"id": id})).await;
        assert_eq!(ok(&a)["structuredContent"]["path"], received, "id {id:?}");
        assert_eq!(hits(&ups, received), 1, "id {id:?}");
    }
    let before: usize = ups.iter().map(|u| u.seen().len()).sum();
    for id in ["..", ".", ""] {
        let a = mcp.tool("get_item", json!({"id": id})).await;
        assert_eq!(a.error_code(), Some(-32602), "id {id:?}: {:?}", a.messages);
        assert_eq!(a.message()["error"]["data"]["field"], "id");
    }
    let after: usize = ups.iter().map(|u| u.seen().len()).sum();
    assert_eq!(before, after, "refused values never reach an upstream");
    assert!(ups.iter().all(|u| u.seen().iter().all(|s| s.target.starts_with("/items/"))));
}

#[tokio::test]
async fn credentials_reach_the_upstream_but_never_the_client_or_the_log() {
    let (_shared, ups) = three();
    // The most verbose log there is: the token must not appear in it either.
    let server = Server::start_with(&config(&ups, ""), &[TOKEN_ENV, ("RUST_LOG", "trace")]);
    let mcp = server.mcp();
    let a = mcp.tool("secret", json!({})).await;
    assert_eq!(ok(&a)["structuredContent"], json!({"authorized": true}));
    let failing = mcp.tool("status", json!({"code": 401})).await;
    assert_eq!(failing.result()["isError"], true);
    let away = mcp.tool("redirect_away", json!({})).await;
    assert_eq!(away.result()["isError"], true);

    let seen: Vec<Seen> = ups.iter().flat_map(Upstream::seen).collect();
    assert!(seen.iter().all(|s| s.headers[header::AUTHORIZATION] == "Bearer s3cr3t-t0ken"), "on every request");
    for answer in [&a, &failing, &away] {
        assert!(!String::from_utf8_lossy(&answer.raw).contains("s3cr3t"), "token in a response");
    }
    let log = server.stderr();
    assert!(log.contains("http.client"), "the trace log was on: {}", &log[..log.len().min(2000)]);
    assert!(!log.contains("s3cr3t"), "token in the log");
}

#[tokio::test]
async fn redirects_never_leave_the_upstream_host() {
    let (_shared, ups) = three();
    let server = start(&ups, "");
    let mcp = server.mcp();
    let a = mcp.tool("redirect_away", json!({})).await;
    assert_response("tools/call", a.message());
    assert_eq!(a.result()["isError"], true);
    assert!(a.text(0).starts_with("HTTP 302 Found") && a.text(0).contains("not followed"), "{}", a.text(0));
    assert_eq!(hits(&ups, "/stolen"), 0);

    let a = mcp.tool("redirect_here", json!({})).await;
    assert!(ok(&a)["structuredContent"]["upstream"].is_string(), "same-host redirects are followed");
}

#[tokio::test]
async fn responses_map_to_results() {
    let (_shared, ups) = three();
    let server = start(&ups, "");
    let mcp = server.mcp();

    let a = mcp.tool("who", json!({})).await;
    let r = ok(&a);
    let upstream = r["structuredContent"]["upstream"].as_str().unwrap();
    assert_eq!(serde_json::from_str::<Value>(&a.text(0)).unwrap(), json!({"upstream": upstream}));

    for (code, line) in [(404, "HTTP 404 Not Found"), (500, "HTTP 500 Internal Server Error")] {
        let a = mcp.tool("status", json!({"code": code})).await;
        assert_response("tools/call", a.message());
        assert_eq!(a.result()["isError"], true);
        assert_eq!(a.text(0), format!("{line}: upstream says no: details here"));
    }

    let a = mcp.tool("image", json!({})).await;
    assert_eq!(ok(&a)["content"][0], json!({"type": "image", "data": "iVBORw==", "mimeType": "image/png"}));
}

#[tokio::test]
async fn rest_adapter_passes_the_shared_conformance_check() {
    let (shared, ups) = three();
    let server = start(&ups, "");
    let executions = || ups.iter().map(|u| u.seen().len()).sum();
    let stopped = || {
        let started = shared.slow_started.load(Ordering::SeqCst);
        started > 0 && shared.slow_abandoned.load(Ordering::SeqCst) == started
    };
    adapter_conformance::check(AdapterUnderTest {
        mcp: server.mcp(),
        tools: &["who", "get_item", "slow"],
        bad_call: ("get_item", json!({"id": 5})),
        executions: &executions,
        slow_call: ("slow", json!({}), Duration::from_millis(1000)),
        stopped: &stopped,
    })
    .await;
}
