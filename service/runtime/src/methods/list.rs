//! `tools/list`, `resources/list`, `resources/templates/list`, `prompts/list` (MCP 2026-07-28 server/tools; server/utilities/pagination):
//! a page of the pre-rendered list, chosen by the opaque cursor. When `[auth]` has access rules
//! for the listed kind, the page shows each caller only what it may use and is marked
//! `cacheScope: "private"` (MCP 2026-07-28 server/utilities/caching): the answer depends on the
//! caller. Without rules the pre-rendered page is sent as it is.

use std::collections::HashMap;

use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::auth::policy;
use crate::config::{AccessRule, AccessRules};
use crate::pipeline::Ctx;
use crate::registry::Registry;
use crate::rpc::{Reply, RpcError, response};

/// Serves the page `page` selects for `params.cursor`; `key` names its item array.
pub fn handle(
    ctx: &Ctx<'_>,
    params: &Map<String, Value>,
    page: for<'r> fn(&'r Registry, Option<&str>) -> Result<&'r RawValue, RpcError>,
    key: &'static str,
) -> Result<Reply, RpcError> {
    let cursor = match params.get("cursor") {
        None | Some(Value::Null) => None,
        Some(Value::String(c)) => Some(c.as_str()),
        Some(_) => {
            return Err(RpcError::invalid_params("Invalid params: cursor must be the string a previous page returned"));
        }
    };
    let body = page(&ctx.registry, cursor)?;
    let auth = ctx.state.auth.load();
    let rules = auth.as_deref().map(|a| &a.config().rules);
    let Some(rules) = rules.and_then(|r| rules_for(key, r)) else {
        return Ok(Reply::ok(response::success(ctx.id, body)));
    };
    let mut page: Map<String, Value> =
        serde_json::from_str(body.get()).map_err(|e| RpcError::internal(&e.to_string()))?;
    if let Some(Value::Array(items)) = page.get_mut(key) {
        let id_field = if matches!(key, "resources" | "skills") { "uri" } else { "name" };
        items.retain(|item| {
            let id = item.get(id_field).and_then(Value::as_str).unwrap_or_default();
            rules.get(id).is_none_or(|rule: &AccessRule| policy::check(rule, ctx.identity.as_ref()).is_ok())
        });
    }
    page.insert("cacheScope".into(), Value::from("private"));
    Ok(Reply::ok(response::success(ctx.id, &page)))
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
