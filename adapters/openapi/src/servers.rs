//! Where an operation is sent: its own `servers` (OpenAPI 3.1 § 4.8.10.1, Operation Object),
//! else its path item's (§ 4.8.9.1, Path Item Object), else the document's (§ 4.8.2.1); the
//! first Server Object of the list, its variables at their defaults. An `http.base_urls` in
//! the config overrides all of them (the operator's choice: a proxy, a staging host).

use serde_json::Value;

use crate::source::Documents;

/// The URL of the first Server Object of `servers` (found in document `doc`), resolved
/// against that document's URL when relative; `None` when the list is absent or empty.
pub fn first(docs: &Documents, doc: usize, servers: Option<&Value>) -> Result<Option<String>, String> {
    let Some(server) = servers.and_then(|s| s.get(0)) else { return Ok(None) };
    let mut url = server.get("url").and_then(Value::as_str).unwrap_or("/").to_owned();
    if let Some(vars) = server.get("variables").and_then(Value::as_object) {
        for (name, v) in vars {
            let default = v.get("default").and_then(Value::as_str).unwrap_or_default();
            url = url.replace(&format!("{{{name}}}"), default);
        }
    }
    let base = docs.url(doc);
    let resolved = match url::Url::parse(&url) {
        Ok(u) => u,
        Err(_) if base.scheme() != "file" => base.join(&url).map_err(|e| format!("server '{url}': {e}"))?,
        Err(_) => return Err(format!("the document's server '{url}' is relative to a local file: set http.base_urls")),
    };
    Ok(Some(resolved.as_str().trim_end_matches('/').to_owned()))
}

/// The server of an operation of its own (the operation's `servers`, else its path item's),
/// or `None` when it goes where the document's root `servers` say.
pub fn of_operation(docs: &Documents, item_doc: usize, item: &Value, op: &Value) -> Result<Option<String>, String> {
    let listed = |v: &Value| v.get("servers").filter(|s| s.as_array().is_some_and(|a| !a.is_empty())).cloned();
    let Some(servers) = listed(op).or_else(|| listed(item)) else { return Ok(None) };
    let Some(url) = first(docs, item_doc, Some(&servers))? else { return Ok(None) };
    // Checked here, not by the REST adapter: one operation's odd server leaves that
    // operation out, never the whole document.
    let parsed = url::Url::parse(&url).map_err(|e| format!("its server '{url}' is not a URL ({e})"))?;
    if !matches!(parsed.scheme(), "http" | "https") || parsed.host_str().is_none() {
        return Err(format!("its server '{url}' is not an http:// or https:// URL with a host"));
    }
    if !parsed.username().is_empty() || parsed.password().is_some() || parsed.query().is_some() {
        return Err(format!("its server '{url}' carries credentials or a query, which a base URL may not"));
    }
    Ok(Some(url))
}
