//! An operation's inputs: its parameters (the path item's, overridden by the operation's,
//! OpenAPI 3.1 § 4.8.10.1) and its request body, as REST [`Param`]s / [`BodyParam`] and as
//! the properties of the tool's input schema. A parameter keeps its name as the argument
//! name unless two locations share it (`id` in the path and the query: `id_query`).

use mcp_adapter_rest::operation::{BodyParam, Encoding, Location, Param, Style};
use mcp_adapter_rest::request::check_header_name;
use serde_json::{Map, Value};

use crate::encoding;
use crate::import::trim;
use crate::schema::Schemas;

/// What the tool takes and how the request carries it.
#[derive(Debug)]
pub struct Inputs {
    /// Parameters.
    pub params: Vec<Param>,
    /// The body.
    pub body: Option<BodyParam>,
    /// Input schema properties.
    pub properties: Map<String, Value>,
    /// Required properties.
    pub required: Vec<String>,
}

/// Header parameters OpenAPI says are ignored (the client or the body decides them).
const IGNORED_HEADERS: [&str; 3] = ["accept", "content-type", "authorization"];

/// The inputs of `op` (in path item `item` of document `doc`).
pub fn inputs(schemas: &mut Schemas<'_>, doc: usize, item: &Value, op: &Value, max: usize) -> Result<Inputs, String> {
    let mut declared: Vec<(usize, &Value)> = Vec::new();
    for list in [item.get("parameters"), op.get("parameters")] {
        for p in list.and_then(Value::as_array).into_iter().flatten() {
            let (d, p) = schemas.deref(doc, p).map_err(|why| format!("a parameter's {why}"))?;
            let key = |p: &Value| (p.get("name").cloned(), p.get("in").cloned());
            match declared.iter().position(|(_, q)| key(q) == key(p)) {
                Some(i) => declared[i] = (d, p),
                None => declared.push((d, p)),
            }
        }
    }
    let mut out = Inputs { params: Vec::new(), body: None, properties: Map::new(), required: Vec::new() };
    for (d, p) in declared {
        let name = p.get("name").and_then(Value::as_str).ok_or("a parameter has no name")?;
        let location = match p.get("in").and_then(Value::as_str) {
            Some("path") => Location::Path,
            Some("query") => Location::Query,
            Some("header") => Location::Header,
            Some("cookie") => Location::Cookie,
            other => {
                return Err(format!(
                    "parameter '{name}' is in '{}', not path/query/header/cookie",
                    other.unwrap_or("")
                ));
            }
        };
        if location == Location::Header
            && (IGNORED_HEADERS.contains(&name.to_ascii_lowercase().as_str()) || check_header_name(name, None).is_err())
        {
            continue;
        }
        let style = style(p)
            .map_err(|other| format!("parameter '{name}' has an unknown style '{other}'"))?
            .unwrap_or(Style::default_for(location));
        let explode = p.get("explode").and_then(Value::as_bool).unwrap_or(style == Style::Form);
        let allow_reserved = p.get("allowReserved").and_then(Value::as_bool).unwrap_or(false);
        // `content` instead of `schema`: one media type, the value written in it as one text
        // (OpenAPI 3.1 § 4.8.12.2).
        let content = p.get("content").and_then(Value::as_object).and_then(|c| c.iter().next());
        let raw_schema = p.get("schema").or_else(|| content?.1.get("schema")).unwrap_or(&Value::Null);
        let content = content.filter(|_| p.get("schema").is_none()).map(|(ct, _)| ct.clone());
        let mut schema = match raw_schema {
            Value::Null => Value::Object(Map::new()),
            s => schemas.convert(d, s),
        };
        describe(&mut schema, p, max);
        let argument = free_name(&out.properties, name, location);
        if location == Location::Path || p.get("required").and_then(Value::as_bool) == Some(true) {
            out.required.push(argument.clone());
        }
        out.properties.insert(argument.clone(), schema);
        out.params.push(Param { name: name.to_owned(), argument, location, style, explode, allow_reserved, content });
    }
    if let Some(body) = op.get("requestBody") {
        let (d, body) = schemas.deref(doc, body).map_err(|why| format!("the requestBody's {why}"))?;
        if let Some((content_type, encoding, media)) = pick_media(body) {
            let mut schema = match media.get("schema") {
                Some(s) => schemas.convert(d, s),
                None if encoding == Encoding::Text => serde_json::json!({"type": "string"}),
                None => Value::Object(Map::new()),
            };
            describe(&mut schema, body, max);
            let argument = ["body", "requestBody", "request_body"]
                .into_iter()
                .find(|n| !out.properties.contains_key(*n))
                .ok_or("the parameter names leave no name for the request body")?
                .to_owned();
            if body.get("required").and_then(Value::as_bool) == Some(true) {
                out.required.push(argument.clone());
            }
            out.properties.insert(argument.clone(), schema);
            let parts = encoding::parts(schemas, d, media, encoding)?;
            out.body = Some(BodyParam { argument, encoding, content_type, parts });
        }
    }
    Ok(out)
}

/// A `style` as written (`Err`: an unknown one), shared by parameters and the Encoding Object.
pub fn style(of: &Value) -> Result<Option<Style>, String> {
    Ok(Some(match of.get("style").and_then(Value::as_str) {
        None => return Ok(None),
        Some("simple") => Style::Simple,
        Some("label") => Style::Label,
        Some("matrix") => Style::Matrix,
        Some("form") => Style::Form,
        Some("spaceDelimited") => Style::SpaceDelimited,
        Some("pipeDelimited") => Style::PipeDelimited,
        Some("deepObject") => Style::DeepObject,
        Some(other) => return Err(other.to_owned()),
    }))
}

/// The media type sent: JSON first, then forms, then text or bytes as a string.
fn pick_media(body: &Value) -> Option<(String, Encoding, &Value)> {
    let content = body.get("content")?.as_object()?;
    let of = |ct: &str| {
        let essence = ct.split(';').next().unwrap_or_default().trim().to_ascii_lowercase();
        if essence == "application/json" || essence.ends_with("+json") {
            (0, Encoding::Json)
        } else if essence == "application/x-www-form-urlencoded" {
            (1, Encoding::Form)
        } else if essence == "multipart/form-data" {
            (2, Encoding::Multipart)
        } else if essence.contains("json") {
            (3, Encoding::Json)
        } else {
            (4, Encoding::Text)
        }
    };
    content
        .iter()
        .filter(|(ct, _)| !ct.contains('*'))
        .min_by_key(|(ct, _)| of(ct).0)
        .or_else(|| content.iter().next())
        .map(|(ct, media)| {
            let sent = if ct.contains('*') { "application/octet-stream".to_owned() } else { ct.clone() };
            (sent, of(ct).1, media)
        })
}

/// The parameter's own description on its schema, unless the schema has one.
fn describe(schema: &mut Value, from: &Value, max: usize) {
    let Some(text) = from.get("description").and_then(Value::as_str).map(str::trim).filter(|t| !t.is_empty()) else {
        return;
    };
    if let Value::Object(map) = schema
        && !map.contains_key("description")
    {
        map.insert("description".to_owned(), Value::String(trim(text, max)));
    }
}

/// `name`, or `name_<location>` when another location took it.
fn free_name(taken: &Map<String, Value>, name: &str, location: Location) -> String {
    if !taken.contains_key(name) {
        return name.to_owned();
    }
    let suffix = match location {
        Location::Path => "path",
        Location::Query => "query",
        Location::Header => "header",
        Location::Cookie => "cookie",
    };
    let mut n = format!("{name}_{suffix}");
    while taken.contains_key(&n) {
        n.push('_');
    }
    n
}
