//! Benchmark (not a test): what calling an upstream as the caller costs once the caller's
//! exchanged token is cached (RFC 8693 `token_exchange`), against the same call with a
//! static credential (`auth`): the same tool on the same loopback upstream, two adapters, the
//! two kinds of call interleaved in one run so drift hits both alike. Tracing off.
//!
//! Run: `cargo bench -p mcp-adapter-rest --bench token_exchange` (env: `ITERATIONS`, default
//! 20000 per kind). Prints p50/p90/p99 per kind and the difference, in microseconds, and the
//! exchanges made (one: every later call finds the token in the cache).

use std::time::Duration;

use mcp_adapter_api::protocol::CallToolResult;
use mcp_adapter_api::{Adapter, Build as _, BuildContext, CallContext, Environment, Identity, Outcome, ToolCall};
use mcp_adapter_rest::{Rest, RestConfig};
use serde_json::{Map, Value, json};

mod support;
use support::{percentiles, row, start_upstream, timed};

fn main() {
    let iterations: usize = std::env::var("ITERATIONS").ok().and_then(|v| v.parse().ok()).unwrap_or(20_000);
    let base = start_upstream();
    let adapter = |credential: Value| -> RestConfig {
        let mut config = json!({
            "base_urls": [base],
            "tools": [{
                "name": "get_item",
                "description": "An item.",
                "path": "/items/{id}",
                "input_schema": {"type": "object", "required": ["id"], "properties": {"id": {"type": "string"}}},
            }],
        });
        config.as_object_mut().expect("object").extend(credential.as_object().expect("object").clone());
        serde_json::from_value(config).expect("config")
    };
    let fixed = adapter(json!({"auth": {"kind": "bearer", "secret_env": "UPSTREAM_TOKEN"}}));
    let exchanged = adapter(json!({"token_exchange": {
        "token_endpoint": format!("{base}/token"), "client_id": "mcp-runtime",
        "client_secret_env": "EXCHANGE_SECRET", "audience": "https://api.test"}}));
    let env: Environment =
        [("UPSTREAM_TOKEN", "static-token-0123456789"), ("EXCHANGE_SECRET", "runtime-secret")].into_iter().collect();
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
    let _guard = runtime.enter();
    let fixed = Rest::build(&fixed, &BuildContext::with_env(env.clone())).expect("static adapter");
    let exchanged = Rest::build(&exchanged, &BuildContext::with_env(env)).expect("exchanging adapter");
    let args: Map<String, Value> = json!({"id": "item-42"}).as_object().cloned().expect("object");
    // A caller vouched for by an issuer, with the access token an exchange trades.
    let caller = Identity::issued("https://idp.test", "alice", vec![], Map::new())
        .with_subject_token("callers-own-access-token-0123456789");

    let call = |rest: &'static Rest| {
        let (args, caller) = (&args, &caller);
        async move {
            let cx = CallContext { identity: Some(caller.clone()), ..CallContext::detached(Duration::from_secs(10)) };
            let call = ToolCall { name: "get_item", arguments: args, input: Default::default() };
            match rest.call_tool(call, &cx).await.expect("adapter call") {
                Outcome::Complete(CallToolResult { structured_content: Some(v), .. }) => assert_eq!(v["id"], "item-42"),
                other => panic!("unexpected outcome {other:?}"),
            }
        }
    };
    let (fixed, exchanged): (&'static Rest, &'static Rest) =
        (Box::leak(Box::new(fixed)), Box::leak(Box::new(exchanged)));

    let (s, x) = runtime.block_on(async {
        // Warm-up (the one exchange happens here).
        for _ in 0..2_000 {
            call(fixed).await;
            call(exchanged).await;
        }
        let (mut s, mut x) = (Vec::with_capacity(iterations), Vec::with_capacity(iterations));
        for i in 0..iterations {
            // Alternate which goes first, so neither always finds a warmer cache.
            if i % 2 == 0 {
                s.push(timed(call(fixed)).await);
                x.push(timed(call(exchanged)).await);
            } else {
                x.push(timed(call(exchanged)).await);
                s.push(timed(call(fixed)).await);
            }
        }
        (s, x)
    });
    let (s, x) = (percentiles(s), percentiles(x));
    println!("REST adapter, token exchange (cached) against a static credential: {iterations} calls per kind (µs)");
    println!("{:<38}{:>9}{:>9}{:>9}", "", "p50", "p90", "p99");
    row("static auth (bearer)", s);
    row("token_exchange, token cached", x);
    row("difference", [x[0] - s[0], x[1] - s[1], x[2] - s[2]]);
    let exchanges = support::TOKEN_REQUESTS.load(std::sync::atomic::Ordering::Relaxed);
    println!("token requests at the upstream's /token: {exchanges} (the rest found the token cached)");
    assert_eq!(exchanges, 1, "one exchange for the one caller");
}
