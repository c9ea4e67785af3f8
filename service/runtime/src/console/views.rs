//! The JSON behind each console page. Built when an operator looks; secrets never leave:
//! the config view is the file's text parsed and redacted key by key, catalog entries carry
//! only what `tools/list` would, and backends name a URL or command, never a credential.

use std::collections::HashMap;

use serde_json::{Map, Value, json};

use crate::clock;
use crate::registry::NamedAdapter;
use crate::state::AppState;

/// How this binary was built, as the Overview's Runtime line says it: `debug`, `release`, or
/// `profile-guided release` (the image's build; `mcp-runtime --version` says it too: build.rs).
fn build() -> &'static str {
    if cfg!(debug_assertions) {
        "debug"
    } else if env!("MCP_RUNTIME_BUILD").is_empty() {
        "release"
    } else {
        "profile-guided release"
    }
}

/// Overview: who this is, since when, its configuration and links.
pub async fn overview(state: &AppState) -> Value {
    let Some(console) = &state.console else { return Value::Null };
    let registry = state.registry.load();
    let last_reload = console.last_reload.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone();
    let replicas = super::sample::replicas(state).await;
    let now = clock::now_ms();
    json!({
        "server": {"name": state.server.info.name, "version": state.server.info.version, "title": state.server.info.title},
        "runtime": {"version": env!("CARGO_PKG_VERSION"), "build": build()},
        "replica": state.replica,
        "started_ms": console.started_ms,
        "uptime_ms": now.saturating_sub(console.started_ms),
        "config_file": console.config_file,
        "last_reload": last_reload.map(|(at_ms, ok, error)| json!({"at_ms": at_ms, "ok": ok, "error": error})),
        "mcp_path": state.server.path,
        "auth": state.auth.load().is_some(),
        "redis": state.redis.as_ref().map(|r| json!({"up": r.is_up(), "required": r.required})),
        "replicas": replicas.map(|rs| rs.into_iter().map(|(id, at_ms)| json!({
            "replica": id, "last_seen_ms": at_ms, "self": id == state.replica,
        })).collect::<Vec<_>>()),
        "counts": {
            "adapters": registry.adapters().len(),
            "tools": registry.tools().count(),
            "listen_streams": state.streams.open(),
        },
    })
}

/// Catalog: every tool with its adapter, kind, schemas, annotations and policies; resources,
/// templates and prompts by adapter.
pub fn catalog(state: &AppState) -> Value {
    let registry = state.registry.load();
    // Kinds come from the adapters as built: the configuration kept after start-up has no
    // adapter sections.
    let kinds: HashMap<&str, &str> = registry.adapters().iter().map(|a| (a.name.as_str(), a.kind)).collect();
    let kind_of = |adapter: &str| kinds.get(adapter).copied();
    let auth = state.auth.load();
    let rules = auth.as_deref().map(|a| &a.config().rules);
    let limit = |l: Option<crate::config::Limit>| {
        l.map(|l| json!({"rate": l.rate, "per_ms": l.per.as_millis() as u64, "burst": l.burst}))
    };
    let mut tools: Vec<Value> = registry
        .tools()
        .map(|t| {
            let p = &t.policy;
            let scopes = rules.and_then(|r| r.tools.get(&t.tool.name)).map(|r| json!({"scopes": r.scopes, "claims": r.claims}));
            json!({
                "tool": t.tool,
                "adapter": &*t.adapter_name,
                "kind": kind_of(&t.adapter_name),
                "policy": {
                    "timeout_ms": p.timeout_ms.unwrap_or(u64::try_from(registry.call_timeout.as_millis()).unwrap_or(u64::MAX)),
                    "confirm": p.confirm,
                    "elicit_missing_arguments": p.elicit_missing_arguments,
                    "cache_ttl_ms": p.cache_ttl_ms,
                    "requires_capabilities": p.requires_capabilities,
                    "rate_limit_per_caller": limit(t.limits.per_caller),
                    "rate_limit_global": limit(t.limits.global),
                    "access": scopes,
                },
            })
        })
        .collect();
    tools.sort_by(|a, b| a["tool"]["name"].as_str().cmp(&b["tool"]["name"].as_str()));
    let (mut resources, mut templates, mut prompts) = (Vec::new(), Vec::new(), Vec::new());
    for NamedAdapter { name, kind, adapter, .. } in registry.adapters() {
        let c = adapter.catalog();
        let with = |item: Value| json!({"item": item, "adapter": name, "kind": kind});
        resources.extend(c.resources.iter().map(|r| with(json!(r))));
        templates.extend(c.resource_templates.iter().map(|r| with(json!(r))));
        prompts.extend(c.prompts.iter().map(|p| with(json!(p))));
    }
    json!({"tools": tools, "resources": resources, "resource_templates": templates, "prompts": prompts})
}

/// Adapters: each one's health and backends (REST upstreams, hosted processes, concurrency).
pub fn adapters(state: &AppState) -> Value {
    let registry = state.registry.load();
    let mut tools: HashMap<&str, usize> = HashMap::new();
    for t in registry.tools() {
        *tools.entry(&t.adapter_name).or_default() += 1;
    }
    let list: Vec<Value> = registry
        .adapters()
        .iter()
        .map(|NamedAdapter { name, kind, adapter, .. }| {
            let tools = tools.get(name.as_str()).copied().unwrap_or(0);
            json!({"name": name, "kind": kind, "tools": tools, "status": adapter.status()})
        })
        .collect();
    json!({"adapters": list})
}

/// Endpoints: each virtual endpoint (`[[endpoints]]`) with what it serves and how its tools
/// differ from the catalog's; the definitions that are not the pinned ones (`[pinning]`), each
/// beside its pin.
pub fn endpoints(state: &AppState) -> Value {
    let registry = state.registry.load();
    let pinning = &registry.config().pinning;
    let list: Vec<Value> = registry
        .endpoints()
        .iter()
        .map(|e| {
            let counts = e.counts();
            let mut tools: Vec<Value> = e
                .tools()
                .map(|t| {
                    let fixed = t.origin.as_ref().map(|o| Value::Object(o.fixed.clone()));
                    json!({
                        "name": t.tool.name,
                        "catalog_name": t.catalog_name(),
                        "adapter": &*t.adapter_name,
                        "description": t.tool.description,
                        "fixed": fixed,
                    })
                })
                .collect();
            tools.sort_by(|a, b| a["name"].as_str().cmp(&b["name"].as_str()));
            json!({
                "path": e.endpoint,
                "discovery": if e.search.is_some() { "search" } else { "list" },
                "counts": {"tools": counts.tools, "resources": counts.resources, "templates": counts.templates, "prompts": counts.prompts},
                "tools": tools,
            })
        })
        .collect();
    let unpinned: Vec<Value> = registry
        .unpinned
        .iter()
        .map(|u| {
            json!({
                "key": u.key, "adapter": &*u.adapter, "withheld": u.withheld, "pinned": u.pinned, "current": u.current,
                "sha256": crate::registry::pins::digest(&u.current),
            })
        })
        .collect();
    json!({
        "mcp_path": state.server.path,
        "endpoints": list,
        "pinning": {
            "mode": pinning.mode.map(|m| if m == crate::config::pinning::PinMode::Enforce { "enforce" } else { "warn" }),
            "lock_file": pinning.lock_file.as_ref().map(|p| p.display().to_string()),
            "pinned": pinning.lock.items.len(),
            "unpinned": unpinned,
        },
    })
}

/// Connections: who is connected to which upstream (`[user_auth]`), never a token; none when
/// it is not configured, and an `error` when the store did not answer.
pub async fn connections(state: &AppState) -> Value {
    let Some(c) = &state.connections else {
        return json!({"configured": false, "upstreams": [], "connections": [], "sealed_elsewhere": 0});
    };
    let (listing, error) = match c.vault.list().await {
        Ok(l) => (l, None),
        Err(e) => (Default::default(), Some(e.to_string())),
    };
    json!({
        "configured": true, "upstreams": c.upstream_names(), "shared": state.redis.is_some(),
        "connections": listing.connections, "sealed_elsewhere": listing.sealed_elsewhere, "error": error,
    })
}

/// How many tools the Calls page charts at once: the busiest of the window among those
/// matching its filter (four charts each; a catalog of thousands stays one page).
pub const CHARTED: usize = 12;

/// Calls: charts of the [`CHARTED`] busiest tools whose name contains `chart` (all when
/// empty), how many tools matched and have calls, and the last calls of this replica.
pub fn calls(state: &AppState, chart: &str) -> Value {
    let Some(console) = &state.console else { return Value::Null };
    let series = console.series.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let (charted, matched) = series.busiest(chart, CHARTED);
    let with_calls = series.tools();
    drop(series);
    let recent = state.recent_calls.as_ref().map(|r| r.snapshot()).unwrap_or_default();
    json!({
        "sample_every_ms": crate::state::SAMPLE_EVERY.as_millis() as u64,
        "charted": charted,
        "chart_limit": CHARTED,
        "chart_filter": chart.trim(),
        "matched": matched,
        "tools_with_series": with_calls,
        "recent": recent,
        "arguments_shown": console.config.show_arguments,
    })
}

/// The configuration in effect (its files merged, the overrides applied), every
/// secret-looking value replaced by `"[redacted]"`.
pub fn config(state: &AppState) -> Value {
    let registry = state.registry.load();
    let source = &registry.config().source;
    json!({"file": source.name, "config": redact(source.merged_json())})
}

/// Key fragments whose values are never shown.
const SECRET_KEYS: [&str; 8] =
    ["secret", "token", "password", "key", "credential", "authorization", "cookie", "headers"];

/// `value` with secret-looking entries redacted: by key name (any value under such a key) and
/// URLs carrying a user or password.
pub fn redact(value: Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.into_iter()
                .map(|(k, v)| {
                    let lower = k.to_ascii_lowercase();
                    let secret = SECRET_KEYS.iter().any(|s| lower.contains(s))
                        && !lower.ends_with("_env")
                        && !lower.ends_with("_file");
                    (k, if secret { json!("[redacted]") } else { redact(v) })
                })
                .collect::<Map<_, _>>(),
        ),
        Value::Array(items) => Value::Array(items.into_iter().map(redact).collect()),
        Value::String(s) if has_userinfo(&s) => json!("[redacted]"),
        other => other,
    }
}

fn has_userinfo(s: &str) -> bool {
    let Some((_, rest)) = s.split_once("://") else { return false };
    rest.split(['/', '?', '#']).next().is_some_and(|authority| authority.contains('@'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redaction_hides_secrets_by_key_and_credentials_in_urls() {
        let v = redact(json!({
            "auth": {"tokens": [{"subject": "ops", "secret": "s3cr3t"}]},
            "redis": {"url": "redis://:pw@127.0.0.1:6379"},
            "adapters": [{"base_urls": ["http://127.0.0.1:1"], "auth": {"bearer_env": "TOKEN", "api_key": "k"}}],
            "request_state": {"keys": ["k1"]},
        }));
        let text = v.to_string();
        for secret in ["s3cr3t", "pw@", "\"k\"", "k1"] {
            assert!(!text.contains(secret), "{secret} in {text}");
        }
        assert!(text.contains("http://127.0.0.1:1"), "{text}");
        assert!(text.contains("\"bearer_env\":\"TOKEN\""), "names of variables stay: {text}");
    }
}
