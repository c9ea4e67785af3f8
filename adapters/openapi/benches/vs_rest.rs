//! Benchmark (not a test): an OpenAPI tool against the same request written by hand as a REST
//! tool, both through `call_tool` on the same loopback upstream, interleaved in one run so
//! drift hits both alike. The claim: generated tools cost what hand-written ones cost.
//!
//! Run: `cargo bench -p mcp-adapter-openapi --bench vs_rest` (env `ITERATIONS`, default
//! 20000 per kind). Prints p50/p90/p99 per kind in microseconds and the ratio of the p50s.

use std::time::Duration;

use mcp_adapter_api::protocol::CallToolResult;
use mcp_adapter_api::{Adapter, Build as _, BuildContext, CallContext, Outcome, ToolCall};
use mcp_adapter_openapi::{Documents, OpenApi, OpenApiConfig};
use mcp_adapter_rest::{Rest, RestConfig};
use serde_json::{Map, Value, json};

#[path = "../../rest/benches/support/mod.rs"]
mod support;
use support::{percentiles, row, start_upstream, timed};

fn main() {
    let iterations: usize = std::env::var("ITERATIONS").ok().and_then(|v| v.parse().ok()).unwrap_or(20_000);
    let base = start_upstream();
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
    let _guard = runtime.enter();
    let rest_config: RestConfig = serde_json::from_value(json!({
        "base_urls": [base],
        "tools": [{
            "name": "get_item", "description": "An item.", "path": "/items/{id}",
            "query": {"verbose": "{verbose}"},
            "input_schema": {"type": "object", "required": ["id"],
                             "properties": {"id": {"type": "string"}, "verbose": {"type": "boolean"}}},
        }],
    }))
    .expect("rest config");
    let rest = Rest::build(&rest_config, &BuildContext::default()).expect("rest adapter");
    let document = json!({
        "openapi": "3.1.0", "info": {"title": "Items", "version": "1"},
        "paths": {"/items/{id}": {"get": {
            "operationId": "get_item", "summary": "An item.",
            "parameters": [
                {"name": "id", "in": "path", "required": true, "schema": {"type": "string"}},
                {"name": "verbose", "in": "query", "schema": {"type": "boolean"}},
            ],
        }}},
    });
    let docs = Documents::from_value(url::Url::parse("file:///items.json").expect("url"), document);
    let config: OpenApiConfig =
        serde_json::from_value(json!({"spec": "items.json", "http": {"base_urls": [base]}})).expect("openapi config");
    let openapi = OpenApi::from_documents(&config, &docs, &BuildContext::default()).expect("openapi adapter");
    let args: Map<String, Value> = json!({"id": "item-42", "verbose": true}).as_object().cloned().expect("object");
    let call = |adapter: &'static dyn Adapter| {
        let args = &args;
        async move {
            let cx = CallContext::detached(Duration::from_secs(10));
            let call = ToolCall { name: "get_item", arguments: args, input: Default::default() };
            match adapter.call_tool(call, &cx).await.expect("call") {
                Outcome::Complete(CallToolResult { structured_content: Some(v), .. }) => assert_eq!(v["id"], "item-42"),
                other => panic!("unexpected outcome {other:?}"),
            }
        }
    };
    let rest: &'static dyn Adapter = Box::leak(Box::new(rest));
    let openapi: &'static dyn Adapter = Box::leak(Box::new(openapi));
    let (r, o) = runtime.block_on(async {
        for _ in 0..2_000 {
            call(rest).await;
            call(openapi).await;
        }
        let (mut r, mut o) = (Vec::with_capacity(iterations), Vec::with_capacity(iterations));
        for i in 0..iterations {
            if i % 2 == 0 {
                r.push(timed(call(rest)).await);
                o.push(timed(call(openapi)).await);
            } else {
                o.push(timed(call(openapi)).await);
                r.push(timed(call(rest)).await);
            }
        }
        (r, o)
    });
    let (r, o) = (percentiles(r), percentiles(o));
    println!(
        "OpenAPI tool vs hand-written REST tool: loopback upstream, {iterations} calls per kind, interleaved (µs)"
    );
    println!("{:<38}{:>9}{:>9}{:>9}", "", "p50", "p90", "p99");
    row("REST tool (hand-written)", r);
    row("OpenAPI tool (generated)", o);
    println!("p50 ratio OpenAPI / REST: {:.3}", o[0] / r[0]);
}
