//! Heap bytes a tool costs at rest, by stage: the parsed config, the adapter instance, the
//! registry (validators, list pages) and what stays once serving, for the catalog `loadtest/lib/gen_tools.py` writes
//! (CLI tools with realistic input schemas). Counts live heap bytes (dhat),
//! so the figures are exact and independent of the machine's load.
//! Run: `cargo bench -p mcp-runtime --bench tool_memory` (`TOOLS=N`, default 1000;
//! `DHAT_PROFILE=1` also writes `dhat-heap.json`: allocation sites, at the peak too).

use std::process::Command;

use mcp_runtime::config::Config;
use mcp_runtime::events::Events;
use mcp_runtime::registry::Registry;

// dhat's allocator counts live heap bytes exactly (the workspace denies the `unsafe` a
// hand-written counting allocator needs).
#[global_allocator]
static ALLOC: dhat::Alloc = dhat::Alloc;

fn live() -> isize {
    dhat::HeapStats::get().curr_bytes as isize
}

fn main() {
    // The same switch as the stream_memory bench.
    let _profiler = if std::env::var_os("DHAT_PROFILE").is_some() {
        dhat::Profiler::new_heap()
    } else {
        dhat::Profiler::builder().testing().build()
    };
    let n: usize = std::env::var("TOOLS").ok().and_then(|v| v.parse().ok()).unwrap_or(1000);
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
    let out = Command::new("python3")
        .arg(format!("{root}/loadtest/lib/gen_tools.py"))
        .arg(n.to_string())
        .output()
        .expect("python3 runs loadtest/lib/gen_tools.py");
    assert!(out.status.success(), "gen_tools.py failed: {}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).expect("utf-8 config");

    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let events = Events::new();
    let metrics = std::sync::Arc::new(mcp_runtime::telemetry::metrics::Metrics::new(&[], false));
    let base = live();
    let mut config = Config::from_toml(&text).expect("generated config loads");
    let after_config = live();
    let (adapters, problems) = rt.block_on(mcp_runtime::adapters::build(&config, &events, &metrics));
    assert!(problems.is_empty(), "adapters build: {problems}");
    let after_adapters = live();
    let registry = Registry::build(&config, &adapters).expect("registry builds");
    let after_registry = live();
    // The tools' metric slots, taken once per load as `serve` does (their series are
    // registered on each tool's first call).
    metrics.reload(&registry);
    let after_metrics = live();
    // The most the load held at once (TOML parsing, by dhat's profile: the parser's tokens
    // and events and the spanned tree): freed, but the allocator keeps the pages (RSS).
    let peak = dhat::HeapStats::get().max_bytes as isize;
    // What `serve` keeps: the adapters' sections of the config are dropped once built.
    config.adapters = Vec::new();
    let at_rest = live();
    // The parts, each measured alone.
    let before = live();
    let config_copy = config.clone();
    let config_clone = live() - before;
    drop(config_copy);
    let before = live();
    let catalogs: Vec<_> = adapters.iter().map(|a| a.adapter.catalog()).collect();
    let catalog_clone = live() - before;
    let before = live();
    let validators: Vec<_> = catalogs
        .iter()
        .flat_map(|c| &c.tools)
        .map(|t| jsonschema::validator_for(&t.tool.input_schema).unwrap())
        .collect();
    let all_validators = live() - before;
    drop((validators, catalogs));
    let before = live();
    let mut cursor: Option<String> = None;
    let mut pages = Vec::new();
    loop {
        let page = registry.tools_page(cursor.as_deref()).unwrap().get().to_owned();
        let next: serde_json::Value = serde_json::from_str(&page).unwrap();
        pages.push(page);
        match next["result"]["nextCursor"].as_str().or(next["nextCursor"].as_str()) {
            Some(c) => cursor = Some(c.to_owned()),
            None => break,
        }
    }
    let page_bytes = live() - before;
    drop(pages);

    let per = |bytes: isize| bytes as f64 / n as f64;
    println!("tools: {n}");
    println!("config (parsed, validated)   {:>9.0} B/tool", per(after_config - base));
    println!("adapter instance             {:>9.0} B/tool", per(after_adapters - after_config));
    println!("registry (entries, pages)    {:>9.0} B/tool", per(after_registry - after_adapters));
    println!("metric slots                 {:>9.0} B/tool", per(after_metrics - after_registry));
    println!("all four                     {:>9.0} B/tool", per(after_metrics - base));
    println!("at rest (as served)          {:>9.0} B/tool", per(at_rest - base));
    println!("peak while loading           {:>9.0} B/tool", per(peak - base));
    println!("  of which: a copy of the config   {:>9.0} B/tool", per(config_clone));
    println!("  a copy of the adapters' catalogs {:>9.0} B/tool", per(catalog_clone));
    println!("  compiled input validators        {:>9.0} B/tool", per(all_validators));
    println!("  rendered tools/list pages        {:>9.0} B/tool", per(page_bytes));
    drop((registry, adapters, config));
}
