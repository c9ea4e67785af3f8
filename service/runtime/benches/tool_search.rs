//! Tool search (`[discovery] mode = "search"`) on real catalogs: GitHub's API (1,223 tools,
//! `@octokit/openapi`) and Microsoft Graph beta (22,361 tools, APIs.guru), imported by the
//! `openapi` adapter as `serve` imports them. For each, the fixed set of 200 queries in
//! `loadtest/search/<name>.jsonl` (made by `loadtest/search/make_queries.py`: each query a
//! rewording of one operation's summary, with the operation it should find) is searched, and
//! the bench prints:
//!
//! - top-5 (and top-1, top-10) hit rate: the expected tool among the first five results;
//! - search latency p50/p99/max over the 200 queries, each run 5 times (release build,
//!   one thread; a search as `search_tools` runs it, without the JSON-RPC around it);
//! - the index's heap bytes per tool (dhat: live bytes after building the index minus
//!   before, exact and independent of the machine's load), and the build time.
//!
//! Run: `OPENAPI_DIR=<tests/openapi/setup.sh's folder> cargo bench -p mcp-runtime --bench
//! tool_search` (default folder `target/openapi`; `CATALOGS=github` for one). Exits non-zero
//! when a query's expected operation is not among the imported tools.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use mcp_adapter_openapi::names;
use mcp_runtime::config::Config;
use mcp_runtime::events::Events;
use mcp_runtime::registry::Registry;
use mcp_runtime::registry::search::SearchIndex;

#[global_allocator]
static ALLOC: dhat::Alloc = dhat::Alloc;

const CATALOGS: [(&str, &str); 2] = [
    ("github", "corpus/octokit/package/generated/api.github.com.json"),
    ("graph-beta", "corpus/apis-guru/package/api/microsoft.com/graph-beta.json"),
];

struct Query {
    text: String,
    expect: String,
}

fn main() {
    let root = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."));
    let dir = std::env::var_os("OPENAPI_DIR").map_or_else(|| root.join("target/openapi"), PathBuf::from);
    let only = std::env::var("CATALOGS").ok();
    println!("| catalog | tools | top-1 | top-5 | top-10 | p50 µs | p99 µs | max µs | index B/tool | build ms |");
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for (name, file) in CATALOGS {
        if only.as_deref().is_some_and(|o| !o.split(',').any(|c| c == name)) {
            continue;
        }
        let doc = dir.join(file);
        assert!(doc.is_file(), "{} is missing: run `bash tests/openapi/setup.sh {}`", doc.display(), dir.display());
        let queries = read_queries(&root.join(format!("loadtest/search/{name}.jsonl")));
        run(name, &doc, &queries);
    }
}

fn run(name: &str, doc: &std::path::Path, queries: &[Query]) {
    let toml = format!(
        "[[adapters]]\nname = \"{name}\"\nkind = \"openapi\"\nspec = \"{}\"\nhttp = {{ base_urls = [\"http://127.0.0.1:9\"] }}\n",
        doc.display()
    );
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let config = Config::from_toml(&toml).expect("the catalog's config loads");
    let metrics = Arc::new(mcp_runtime::telemetry::metrics::Metrics::new(&[], false));
    let (adapters, problems) = rt.block_on(mcp_runtime::adapters::build(&config, &Events::new(), &metrics));
    assert!(problems.is_empty(), "{name}: {problems}");
    let registry = Registry::build(&config, &adapters).expect("the registry builds");
    let tools: Vec<_> = registry.tools().cloned().collect();

    let profiler = dhat::Profiler::builder().testing().build();
    let before = dhat::HeapStats::get().curr_bytes;
    let started = Instant::now();
    let index = SearchIndex::build(&tools, 10).expect("the index builds");
    let build = started.elapsed();
    let bytes = dhat::HeapStats::get().curr_bytes.saturating_sub(before);
    drop(profiler);

    let mut ranks = Vec::with_capacity(queries.len());
    let mut times: Vec<Duration> = Vec::with_capacity(queries.len() * 5);
    for q in queries {
        assert!(
            registry.tool(&q.expect).is_some(),
            "{name}: query {:?} expects {}, which is not imported",
            q.text,
            q.expect
        );
        let mut rank = None;
        for _ in 0..5 {
            let t = Instant::now();
            let hits = index.search(&q.text, 10, 0, |_| true);
            times.push(t.elapsed());
            rank = hits.iter().position(|h| h.entry.tool.name == q.expect);
        }
        ranks.push(rank);
    }
    times.sort();
    let pct = |k: usize| 100.0 * ranks.iter().filter(|r| r.is_some_and(|r| r < k)).count() as f64 / ranks.len() as f64;
    let at = |p: f64| times[((times.len() as f64 * p) as usize).min(times.len() - 1)].as_micros();
    println!(
        "| {name} | {} | {:.1} % | **{:.1} %** | {:.1} % | {} | **{}** | {} | **{}** | {} |",
        tools.len(),
        pct(1),
        pct(5),
        pct(10),
        at(0.5),
        at(0.99),
        times.last().unwrap().as_micros(),
        bytes / tools.len().max(1),
        build.as_millis()
    );
    if std::env::var_os("SHOW_MISSES").is_some() {
        for (q, r) in queries.iter().zip(&ranks).filter(|(_, r)| !r.is_some_and(|r| r < 5)) {
            let top = index.search(&q.text, 3, 0, |_| true);
            let top: Vec<&str> = top.iter().map(|h| h.entry.tool.name.as_str()).collect();
            println!("  miss ({r:?}): {:?} expects {} got {top:?}", q.text, q.expect);
        }
    }
}

fn read_queries(path: &std::path::Path) -> Vec<Query> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines()
        .map(|line| {
            let v: serde_json::Value = serde_json::from_str(line).expect("a JSON line");
            let s = |k: &str| v[k].as_str().unwrap_or_else(|| panic!("{}: a line without {k}", path.display()));
            let wanted = vec![(
                names::candidate(Some(s("operationId")), s("method"), s("path")),
                s("method").to_owned(),
                s("path").to_owned(),
            )];
            Query { text: s("query").to_owned(), expect: names::assign(&wanted).remove(0) }
        })
        .collect()
}
