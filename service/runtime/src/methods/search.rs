//! The three tools of `[discovery] mode = "search"` ([`crate::registry::search`]):
//! `search_tools` and `describe_tools` are answered here, from the registry's index and
//! definitions; `call_tool` never reaches a method: [`unwrap_call`] turns it into a
//! `tools/call` of the tool it names before access rules, the call record, MRTR bindings,
//! rate limits and tasks see the request, so each of them applies to the inner tool exactly
//! as to a direct call.

use serde_json::{Map, Value, json};

use crate::auth::policy;
use crate::pipeline::Ctx;
use crate::registry::Registry;
use crate::registry::ToolEntry;
use crate::registry::search::{self, CALL_TOOL, DESCRIBE_TOOL, MAX_DESCRIBE, SEARCH_TOOL};
use crate::rpc::response::{self, ResultObject, ResultType};
use crate::rpc::{Reply, RpcError};

/// In search mode, a `tools/call` of `call_tool` becomes a `tools/call` of the tool it names,
/// with that tool's arguments (`params.name` and `params.arguments` replaced; `_meta`,
/// `requestState` and `inputResponses` kept). Anything else is left alone.
pub fn unwrap_call(registry: &Registry, method: &str, params: &mut Map<String, Value>) -> Result<(), RpcError> {
    if registry.search.is_none()
        || method != "tools/call"
        || params.get("name").and_then(Value::as_str) != Some(CALL_TOOL)
    {
        return Ok(());
    }
    let bad = |what: &str| RpcError::invalid_params(format!("Invalid params: {CALL_TOOL} {what}"));
    let mut outer = match params.remove("arguments") {
        Some(Value::Object(a)) => a,
        _ => return Err(bad("needs arguments {\"name\": <a tool's name>, \"arguments\": {...}}")),
    };
    let name = match outer.remove("name") {
        Some(Value::String(n)) if !search::is_search_tool(&n) => n,
        Some(Value::String(n)) => return Err(bad(&format!("runs catalog tools, not '{n}'"))),
        _ => return Err(bad("needs arguments.name: the name of the tool to run (search_tools finds it)")),
    };
    let arguments = match outer.remove("arguments") {
        None | Some(Value::Null) => Value::Object(Map::new()),
        Some(v @ Value::Object(_)) => v,
        Some(_) => return Err(bad("needs arguments.arguments to be an object: the tool's arguments")),
    };
    if let Some(extra) = outer.keys().next() {
        return Err(bad(&format!("takes only name and arguments, not '{extra}'")));
    }
    params.insert("name".into(), Value::String(name));
    params.insert("arguments".into(), arguments);
    Ok(())
}

/// Answers `search_tools` and `describe_tools`; `None` for any other tool (or outside
/// search mode).
pub fn answer(ctx: &Ctx<'_>, name: &str, params: &Map<String, Value>) -> Option<Result<Reply, RpcError>> {
    let index = ctx.registry.search.as_ref()?;
    let args = params.get("arguments").and_then(Value::as_object);
    let empty = Map::new();
    let args = args.unwrap_or(&empty);
    let body = match name {
        SEARCH_TOOL => search_tools(ctx, index, args),
        DESCRIBE_TOOL => describe_tools(ctx, args),
        _ => return None,
    };
    Some(body.map(|structured| {
        let text = structured.to_string();
        let result = json!({ "content": [{ "type": "text", "text": text }], "structuredContent": structured });
        let result = ResultObject::new(ResultType::Complete, &result, &ctx.registry.server_info);
        Reply::ok(response::success(ctx.id, &result))
    }))
}

fn search_tools(ctx: &Ctx<'_>, index: &search::SearchIndex, args: &Map<String, Value>) -> Result<Value, RpcError> {
    let query = match args.get("query") {
        Some(Value::String(q)) if !q.trim().is_empty() => q,
        _ => {
            return Err(RpcError::invalid_params(
                "Invalid params: search_tools needs arguments.query, a non-empty string",
            ));
        }
    };
    let limit = match args.get("limit") {
        None | Some(Value::Null) => index.default_limit,
        Some(v) => match v.as_u64().filter(|n| (1..=search::MAX_RESULTS as u64).contains(n)) {
            Some(n) => n as usize,
            None => {
                return Err(RpcError::invalid_params(format!(
                    "Invalid params: search_tools limit must be an integer from 1 to {}",
                    search::MAX_RESULTS
                )));
            }
        },
    };
    let (visible, hidden) = visibility(ctx);
    let hits = index.search(query, limit, hidden, |t| visible(t));
    let tools: Vec<Value> = hits
        .iter()
        .map(|h| {
            let t = &h.entry.tool;
            let mut item = json!({ "name": t.name, "score": (f64::from(h.score) * 1000.0).round() / 1000.0 });
            if let Some(title) = &t.title {
                item["title"] = Value::from(title.as_str());
            }
            if let Some(d) = &t.description {
                item["description"] = Value::from(summary(d));
            }
            item
        })
        .collect();
    Ok(json!({ "tools": tools }))
}

fn describe_tools(ctx: &Ctx<'_>, args: &Map<String, Value>) -> Result<Value, RpcError> {
    let names: Vec<&str> = match args.get("names") {
        Some(Value::Array(a)) if !a.is_empty() && a.len() <= MAX_DESCRIBE => {
            a.iter().filter_map(Value::as_str).collect()
        }
        _ => Vec::new(),
    };
    if names.is_empty() {
        return Err(RpcError::invalid_params(format!(
            "Invalid params: describe_tools needs arguments.names, 1 to {MAX_DESCRIBE} tool names"
        )));
    }
    let (visible, _) = visibility(ctx);
    let (mut tools, mut unknown) = (Vec::new(), Vec::new());
    for name in names {
        match ctx.registry.tool(name).filter(|t| visible(t)) {
            Some(t) => tools.push(serde_json::to_value(&t.tool).map_err(|e| RpcError::internal(&e.to_string()))?),
            None => unknown.push(name),
        }
    }
    Ok(if unknown.is_empty() { json!({ "tools": tools }) } else { json!({ "tools": tools, "unknown": unknown }) })
}

/// Whether the caller may see a tool (its access rule, when `[auth]` has one for it: the
/// same rule that filters `tools/list`), and how many tools at most it may not.
fn visibility<'c>(ctx: &'c Ctx<'_>) -> (impl Fn(&ToolEntry) -> bool + 'c, usize) {
    let auth = ctx.state.auth.load_full();
    let identity = ctx.identity.as_ref();
    let hidden = auth
        .as_deref()
        .map_or(0, |a| a.config().rules.tools.values().filter(|r| policy::check(r, identity).is_err()).count());
    let visible = move |t: &ToolEntry| {
        let Some(auth) = auth.as_deref() else { return true };
        auth.config().rules.tools.get(t.catalog_name()).is_none_or(|rule| policy::check(rule, identity).is_ok())
    };
    (visible, hidden)
}

/// The first sentence of a description, at most 200 characters.
fn summary(description: &str) -> String {
    let first = description.split("\n\n").next().unwrap_or(description);
    let end = first.find(". ").map_or(first.len(), |i| i + 1);
    let first = first[..end].trim();
    match first.char_indices().nth(200) {
        Some((i, _)) => format!("{}…", &first[..i]),
        None => first.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::summary;

    #[test]
    fn a_summary_is_the_first_sentence() {
        assert_eq!(summary("Lists issues. Paginated.\n\nMore."), "Lists issues.");
        assert_eq!(summary("x".repeat(300).as_str()).chars().count(), 201);
    }
}
