//! `skills/get` and `resources/directory/read` (the skills extension, SEP-2640 § Getting a
//! Skill, § Reading Directories): answers rendered with the registry, chosen by URI; an
//! unknown skill or directory is `-32602` with `data.uri`. (`skills/list` is a list like the
//! others: [`super::list`].)

use serde_json::{Map, Value, json};

use super::required_str;
use crate::pipeline::Ctx;
use crate::rpc::{Reply, RpcError, response};

/// `skills/get`: the entry of the skill whose `SKILL.md` is `params.uri`.
pub fn get(ctx: &Ctx<'_>, params: &Map<String, Value>) -> Result<Reply, RpcError> {
    let uri = required_str(params, "uri", "skills/get")?;
    let body = ctx.registry.skills.entry(uri).ok_or_else(|| {
        RpcError::invalid_params(format!(
            "No skill is served at {uri}: skills/list names the skills this server serves"
        ))
        .with_data(json!({ "uri": uri }))
    })?;
    Ok(Reply::ok(response::success(ctx.id, body)))
}

/// `resources/directory/read`: the direct children of the directory `params.uri`, in one
/// page (a skill has at most 512 files; a cursor is never handed out, so none is taken).
pub fn directory_read(ctx: &Ctx<'_>, params: &Map<String, Value>) -> Result<Reply, RpcError> {
    let uri = required_str(params, "uri", "resources/directory/read")?;
    if !matches!(params.get("cursor"), None | Some(Value::Null)) {
        return Err(RpcError::invalid_params(
            "Invalid cursor: directory listings are one page; read the directory again without a cursor",
        ));
    }
    let body = ctx.registry.skills.directory(uri).ok_or_else(|| {
        RpcError::invalid_params(format!(
            "{uri} is not a directory resource of this server (skill directories are written without a trailing slash)"
        ))
        .with_data(json!({ "uri": uri }))
    })?;
    Ok(Reply::ok(response::success(ctx.id, body)))
}
