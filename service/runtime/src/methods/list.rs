//! `tools/list`, `resources/list`, `resources/templates/list`, `prompts/list` (MCP 2026-07-28 server/tools; server/utilities/pagination):
//! a page of the pre-rendered list, chosen by the opaque cursor.

use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::pipeline::Ctx;
use crate::registry::Registry;
use crate::rpc::{Reply, RpcError, response};

/// Serves the page `page` selects for `params.cursor`.
pub fn handle(
    ctx: &Ctx<'_>,
    params: &Map<String, Value>,
    page: for<'r> fn(&'r Registry, Option<&str>) -> Result<&'r RawValue, RpcError>,
) -> Result<Reply, RpcError> {
    let cursor = match params.get("cursor") {
        None | Some(Value::Null) => None,
        Some(Value::String(c)) => Some(c.as_str()),
        Some(_) => {
            return Err(RpcError::invalid_params("Invalid params: cursor must be the string a previous page returned"));
        }
    };
    let body = page(&ctx.registry, cursor)?;
    Ok(Reply::ok(response::success(ctx.id, body)))
}
