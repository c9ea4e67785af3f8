//! What `check` and `pin` print: the report of a configuration ready to serve (its tools,
//! virtual endpoints, pinning and adapters' own figures) and the lock file `pin` writes.

use std::path::PathBuf;

use super::{Prepared, emit, prepare, runtime};
use crate::config::Config;

/// `pin`: the adapters built as `serve` builds them, their upstream definitions written to
/// the lock file, and what changed since the last one said.
pub(super) fn pin_main(paths: &[PathBuf]) -> anyhow::Result<()> {
    let config = Config::read(paths, std::env::vars(), false)?;
    let name = config.source.name.clone();
    let Some(lock_file) = config.pinning.lock_file.clone() else {
        anyhow::bail!("{name}: [pinning] has no lock_file: set one (e.g. lock_file = \"mcp-runtime.lock\") to pin to");
    };
    let rt = runtime()?;
    let prepared = rt.block_on(prepare(config, false))?;
    let adapters = prepared.state.as_ref().map(|s| s.registry.load().adapters().to_vec()).unwrap_or_default();
    drop(rt);
    let old = &prepared.config.pinning.lock;
    let new = crate::registry::pins::lock_of(&adapters);
    let changed = new.items.iter().filter(|(k, p)| old.items.get(*k).is_some_and(|o| o.sha256 != p.sha256)).count();
    let added = new.items.keys().filter(|k| !old.items.contains_key(*k)).count();
    let removed = old.items.keys().filter(|k| !new.items.contains_key(*k)).count();
    let mut text = serde_json::to_string_pretty(&new)?;
    text.push('\n');
    std::fs::write(&lock_file, text).map_err(|e| anyhow::anyhow!("cannot write {}: {e}", lock_file.display()))?;
    emit(&format!(
        "{}: {} definitions pinned ({changed} changed, {added} new, {removed} gone since the last pin)\n",
        lock_file.display(),
        new.items.len()
    ))
}

/// `check`: [`prepare`], then what would be served. Only the report and the problems are
/// printed: no log line of the stages (they would bury a problem among INFO lines).
pub(super) fn check_main(paths: &[PathBuf], offline: bool) -> anyhow::Result<()> {
    let config = Config::read(paths, std::env::vars(), offline)?;
    let rt = runtime()?;
    let prepared = rt.block_on(prepare(config, offline))?;
    let name = prepared.config.source.name.clone();
    let (report, tools) = check_report(&prepared, &name, offline);
    drop(rt);
    emit(&report)?;
    if tools == 0 {
        eprintln!("warning: {name} declares no tools: clients will find nothing to call");
    }
    Ok(())
}

/// What `check` prints of a configuration that is ready: a summary line, then each tool
/// with its adapter and kind, then each adapter's own report (an import's figures); and how
/// many tools there are.
fn check_report(prepared: &Prepared, name: &str, offline: bool) -> (String, usize) {
    use std::fmt::Write as _;
    let loaded;
    let registry = match (&prepared.state, &prepared.catalog) {
        (Some(state), _) => {
            loaded = state.registry.load_full();
            &*loaded
        }
        (None, Some(catalog)) => &catalog.registry,
        (None, None) => return (format!("{name}: ok\n"), 0),
    };
    let config = &prepared.config;
    let kind_of = |adapter: &str| registry.adapters().iter().find(|a| *a.name == *adapter).map_or("", |a| a.kind);
    let mut tools: Vec<_> =
        registry.tools().map(|t| (t.tool.name.as_str(), &*t.adapter_name, kind_of(&t.adapter_name))).collect();
    tools.sort_unstable();
    let counts = registry.counts();
    let mut out = format!(
        "{name}: ok{} ({}; {}, {}, {}, {})\n",
        if offline { " offline" } else { "" },
        plural(config.adapters.len(), "adapter", "adapters"),
        plural(tools.len(), "tool", "tools"),
        plural(counts.resources, "resource", "resources"),
        plural(counts.templates, "resource template", "resource templates"),
        plural(counts.prompts, "prompt", "prompts"),
    );
    if registry.search.is_some() {
        out.push_str(
            "  discovery: search (tools/list shows search_tools, describe_tools and call_tool; the tools below are found through them)\n",
        );
    }
    if let Some(mode) = config.pinning.mode {
        let lock = config.pinning.lock_file.as_ref().map(|p| p.display().to_string()).unwrap_or_default();
        let held = registry.unpinned.iter().filter(|u| u.withheld).count();
        let _ = writeln!(
            out,
            "  pinning: {} against {lock} ({} pinned; {held} withheld, {} served unpinned)",
            if mode == crate::config::pinning::PinMode::Enforce { "enforce" } else { "warn" },
            config.pinning.lock.items.len(),
            registry.unpinned.len() - held,
        );
        for u in registry.unpinned.iter() {
            let what = if u.pinned.is_some() { "differs from its pin" } else { "has no pin" };
            let _ = writeln!(out, "    {} {what}{}", u.key, if u.withheld { ": withheld" } else { "" });
        }
    }
    if offline {
        out.push_str(
            "  offline: secrets, programs, TLS files, remote OpenAPI documents and MCP upstreams were not checked\n",
        );
    }
    if !tools.is_empty() {
        let width = tools.iter().map(|t| t.0.len()).max().unwrap_or(0).max(4);
        let adapter_width = tools.iter().map(|t| t.1.len()).max().unwrap_or(0).max(7);
        let _ = writeln!(out, "  {:width$}  {:adapter_width$}  kind", "tool", "adapter");
        for (name, adapter, kind) in &tools {
            let _ = writeln!(out, "  {name:width$}  {adapter:adapter_width$}  {kind}");
        }
    }
    for endpoint in registry.endpoints() {
        endpoint_report(&mut out, endpoint);
    }
    for crate::registry::NamedAdapter { name: adapter_name, adapter, .. } in registry.adapters() {
        if let Some(report) = adapter.report() {
            let _ = writeln!(out, "adapter {adapter_name}: {report}");
        }
    }
    (out, tools.len())
}

/// A virtual endpoint's part of the `check` report: its path and counts, then each tool with
/// the catalog tool it serves, its adapter and the arguments it fixes.
fn endpoint_report(out: &mut String, registry: &crate::registry::Registry) {
    use std::fmt::Write as _;
    let counts = registry.counts();
    let path = registry.endpoint.as_deref().unwrap_or_default();
    let _ = writeln!(
        out,
        "endpoint {path}: {}, {}, {}, {}",
        plural(counts.tools, "tool", "tools"),
        plural(counts.resources, "resource", "resources"),
        plural(counts.templates, "resource template", "resource templates"),
        plural(counts.prompts, "prompt", "prompts"),
    );
    if registry.search.is_some() {
        out.push_str("  discovery: search (its tools/list shows search_tools, describe_tools and call_tool)\n");
    }
    let mut tools: Vec<_> = registry.tools().collect();
    tools.sort_unstable_by(|a, b| a.tool.name.cmp(&b.tool.name));
    let fixed = |t: &crate::registry::ToolEntry| {
        t.origin.as_ref().map(|o| o.fixed.keys().map(String::as_str).collect::<Vec<_>>().join(", ")).unwrap_or_default()
    };
    let width = tools.iter().map(|t| t.tool.name.len()).max().unwrap_or(0).max(4);
    let from_width = tools.iter().map(|t| t.catalog_name().len()).max().unwrap_or(0).max(4);
    let adapter_width = tools.iter().map(|t| t.adapter_name.len()).max().unwrap_or(0).max(7);
    if !tools.is_empty() {
        let _ = writeln!(out, "  {:width$}  {:from_width$}  {:adapter_width$}  fixed", "tool", "from", "adapter");
    }
    for t in tools {
        let line = format!(
            "  {:width$}  {:from_width$}  {:adapter_width$}  {}",
            t.tool.name,
            t.catalog_name(),
            t.adapter_name,
            fixed(t)
        );
        let _ = writeln!(out, "{}", line.trim_end());
    }
}

/// `1 tool`, `2 tools`.
fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}
