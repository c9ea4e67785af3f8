//! Benchmark (not a test): the REST adapter's added latency over calling the same loopback
//! upstream directly with an identically configured reqwest client, same request, measured
//! in one run with the two kinds of call interleaved so drift hits both alike.
//!
//! Run: `cargo bench -p mcp-adapter-rest --bench added_latency` (env: `ITERATIONS`, default
//! 20000 per kind). Prints p50/p90/p99 per kind and the differences, in microseconds: once
//! with tracing off, once with an info-level `fmt` subscriber (what the runtime runs), whose
//! `http.client` span per attempt is part of the adapter's cost.

use std::time::Duration;

use mcp_adapter_api::protocol::CallToolResult;
use mcp_adapter_api::{Adapter, Build as _, BuildContext, CallContext, Outcome, ToolCall};
use mcp_adapter_rest::{Rest, RestConfig};
use serde_json::{Map, Value, json};

mod support;
use support::{percentiles, row, start_upstream, timed};

fn main() {
    let iterations: usize = std::env::var("ITERATIONS").ok().and_then(|v| v.parse().ok()).unwrap_or(20_000);
    let base = start_upstream();
    let config: RestConfig = serde_json::from_value(json!({
        "base_urls": [base],
        "tools": [{
            "name": "get_item",
            "description": "An item.",
            "path": "/items/{id}",
            "query": {"verbose": "{verbose}"},
            "input_schema": {"type": "object", "required": ["id"],
                             "properties": {"id": {"type": "string"}, "verbose": {"type": "boolean"}}},
        }],
    }))
    .expect("config");
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
    let _guard = runtime.enter();
    let rest = Rest::build(&config, &BuildContext::default()).expect("adapter");
    // The adapter's client builder, so the direct calls use the same client settings.
    let direct = mcp_adapter_rest::client::build(&config, None).expect("client");
    let url = format!("{base}/items/item-42?verbose=true");
    let args: Map<String, Value> = json!({"id": "item-42", "verbose": true}).as_object().cloned().expect("object");

    let direct_call = || async {
        let response = direct.get(&url).send().await.expect("direct request");
        let body = response.bytes().await.expect("direct body");
        let value: Value = serde_json::from_slice(&body).expect("json");
        assert_eq!(value["id"], "item-42");
    };
    let adapter_call = || async {
        let cx = CallContext::detached(Duration::from_secs(10));
        let call = ToolCall { name: "get_item", arguments: &args, input: Default::default() };
        match rest.call_tool(call, &cx).await.expect("adapter call") {
            Outcome::Complete(CallToolResult { structured_content: Some(v), .. }) => assert_eq!(v["id"], "item-42"),
            other => panic!("unexpected outcome {other:?}"),
        }
    };

    println!("REST adapter added latency: loopback upstream, {iterations} calls per kind, interleaved (µs)");
    println!("{:<38}{:>9}{:>9}{:>9}", "", "p50", "p90", "p99");
    for (label, tracing_on) in [("tracing off", false), ("info-level fmt subscriber", true)] {
        let run = || {
            runtime.block_on(async {
                for _ in 0..2_000 {
                    direct_call().await;
                    adapter_call().await;
                }
                let (mut d, mut a) = (Vec::with_capacity(iterations), Vec::with_capacity(iterations));
                for i in 0..iterations {
                    // Alternate which goes first, so neither always finds a warmer cache.
                    if i % 2 == 0 {
                        d.push(timed(direct_call()).await);
                        a.push(timed(adapter_call()).await);
                    } else {
                        a.push(timed(adapter_call()).await);
                        d.push(timed(direct_call()).await);
                    }
                }
                (d, a)
            })
        };
        let (direct_ns, adapter_ns) = if tracing_on {
            let subscriber =
                tracing_subscriber::fmt().with_max_level(tracing::Level::INFO).with_writer(std::io::sink).finish();
            tracing::subscriber::with_default(subscriber, run)
        } else {
            run()
        };
        let d = percentiles(direct_ns);
        let a = percentiles(adapter_ns);
        println!("-- {label}");
        row("direct reqwest (send + body + JSON)", d);
        row("adapter call_tool", a);
        row("added by the adapter", [a[0] - d[0], a[1] - d[1], a[2] - d[2]]);
    }
}
