//! `tools/list`, `resources/list`, `resources/templates/list`, `prompts/list` (MCP 2026-07-28 server/tools; server/utilities/pagination):
//! a page of the pre-rendered list, chosen by the opaque cursor.

use axum::http::StatusCode;
use axum::response::Response;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::Ctx;
use crate::http::reply;
use crate::registry::Registry;
use crate::rpc::{RpcError, response};

/// Serves the page `page` selects for `params.cursor`.
pub fn handle(
    ctx: &Ctx<'_>,
    params: &Map<String, Value>,
    page: for<'r> fn(&'r Registry, Option<&str>) -> Result<&'r RawValue, RpcError>,
) -> Result<Response, RpcError> {
    let cursor = match params.get("cursor") {
        None | Some(Value::Null) => None,
        Some(Value::String(c)) => Some(c.as_str()),
        Some(_) => {
            return Err(RpcError::invalid_params("Invalid params: cursor must be the string a previous page returned"));
        }
    };
    let body = page(&ctx.registry, cursor)?;
    Ok(reply::json(StatusCode::OK, response::success(ctx.id, body)))
}
