//! `tools/list`, `resources/list`, `resources/templates/list`, `prompts/list` (MCP 2026-07-28 server/tools; server/utilities/pagination):
//! a page of the pre-rendered list, chosen by the opaque cursor. When `[auth]` has access rules
//! for the listed kind, the page shows each caller only what it may use and is marked
//! `cacheScope: "private"` (MCP 2026-07-28 server/utilities/caching): the answer depends on the
//! caller. Without rules the pre-rendered page is sent as it is.

use std::collections::HashMap;

use mcp_adapter_api::closest;
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};

use crate::auth::policy;
use crate::config::{AccessRule, AccessRules};
use crate::pipeline::Ctx;
use crate::registry::Registry;
use crate::rpc::{Reply, RpcError, response};

/// A list's pre-rendered page for a cursor.
type PageOf = for<'r> fn(&'r Registry, Option<&str>) -> Result<&'r RawValue, RpcError>;

/// Serves the page `page` selects for `params.cursor`; `key` names its item array.
pub fn handle(ctx: &Ctx<'_>, params: &Map<String, Value>, page: PageOf, key: &'static str) -> Result<Reply, RpcError> {
    let body = page(&ctx.registry, cursor(params)?)?;
    if !has_rules(ctx, key) {
        return Ok(Reply::ok(response::success(ctx.id, body)));
    }
    let mut page = parse(body)?;
    if let Some(Value::Array(items)) = page.get_mut(key) {
        filter(ctx, key, items);
    }
    page.insert("cacheScope".into(), Value::from("private"));
    Ok(Reply::ok(response::success(ctx.id, &page)))
}

/// The page `page` selects for `params.cursor` as an object, its items filtered by the access
/// rules (without `cacheScope`: the caller sets it).
pub fn page(
    ctx: &Ctx<'_>,
    params: &Map<String, Value>,
    page: PageOf,
    key: &'static str,
) -> Result<Map<String, Value>, RpcError> {
    let mut page = parse(page(&ctx.registry, cursor(params)?)?)?;
    if let Some(Value::Array(items)) = page.get_mut(key) {
        filter(ctx, key, items);
    }
    Ok(page)
}

/// Leaves out of `items` (of list `key`) what the caller may not use under `[auth]`'s rules.
pub fn filter(ctx: &Ctx<'_>, key: &str, items: &mut Vec<Value>) {
    let auth = ctx.state.auth.load();
    let Some(rules) = auth.as_deref().and_then(|a| rules_for(key, &a.config().rules)) else { return };
    let id_field = if matches!(key, "resources" | "skills") { "uri" } else { "name" };
    items.retain(|item| {
        let id = item.get(id_field).and_then(Value::as_str).unwrap_or_default();
        // A tool's rule names it as the catalog does, whatever the endpoint calls it.
        let id = if key == "tools" { ctx.registry.catalog_name(id).unwrap_or(id) } else { id };
        may_use(ctx, rules, id)
    });
}

/// `-32602` for a tool or prompt (list `key`: `tools`, `prompts`) this endpoint does not serve
/// the caller, with the name they may have meant: an agent that misspelled it can ask again.
pub fn unknown(ctx: &Ctx<'_>, key: &str, name: &str) -> RpcError {
    let what = if key == "tools" { "tool" } else { "prompt" };
    match nearest(ctx, key, name) {
        Some(near) => RpcError::invalid_params(format!("Unknown {what}: {name} (did you mean '{near}'?)"))
            .with_data(json!({ "name": name, "didYouMean": near })),
        None => RpcError::invalid_params(format!("Unknown {what}: {name}")).with_data(json!({ "name": name })),
    }
}

/// The tool or prompt (list `key`) this caller may use here whose name is nearest to `name`
/// (an agent's typo), when one is near: never one `[auth]`'s rules keep from them, nor one
/// of another endpoint.
fn nearest<'r>(ctx: &'r Ctx<'_>, key: &str, name: &str) -> Option<&'r str> {
    let auth = ctx.state.auth.load();
    let rules = auth.as_deref().and_then(|a| rules_for(key, &a.config().rules));
    let usable = |id: &str| rules.is_none_or(|r| may_use(ctx, r, id));
    match key {
        // A rule names the tool as the catalog does, whatever the endpoint calls it.
        "tools" => {
            closest(name, ctx.registry.tools().filter(|t| usable(t.catalog_name())).map(|t| t.tool.name.as_str()))
        }
        _ => closest(name, ctx.registry.prompt_names().filter(|p| usable(p))),
    }
}

/// Whether the caller may use item `id` under `rules`.
fn may_use(ctx: &Ctx<'_>, rules: &HashMap<String, AccessRule>, id: &str) -> bool {
    rules.get(id).is_none_or(|rule| policy::check(rule, ctx.identity.as_ref()).is_ok())
}

fn cursor(params: &Map<String, Value>) -> Result<Option<&str>, RpcError> {
    match params.get("cursor") {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(c)) => Ok(Some(c.as_str())),
        Some(_) => Err(RpcError::invalid_params("Invalid params: cursor must be the string a previous page returned")),
    }
}

fn parse(body: &RawValue) -> Result<Map<String, Value>, RpcError> {
    serde_json::from_str(body.get()).map_err(|e| RpcError::internal(&e.to_string()))
}

/// Whether `[auth]` has access rules for list `key`.
fn has_rules(ctx: &Ctx<'_>, key: &str) -> bool {
    ctx.state.auth.load().as_deref().is_some_and(|a| rules_for(key, &a.config().rules).is_some())
}

/// The rules of the items a list holds (`None`: no rules, the page is the same for everyone).
fn rules_for<'r>(key: &str, rules: &'r AccessRules) -> Option<&'r HashMap<String, AccessRule>> {
    let map = match key {
        "tools" => &rules.tools,
        "prompts" => &rules.prompts,
        // A skill is listed to whoever may read its SKILL.md (its entry's `uri`).
        "resources" | "skills" => &rules.resources,
        _ => return None,
    };
    (!map.is_empty()).then_some(map)
}
