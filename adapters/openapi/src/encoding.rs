//! The Encoding Object of a form or multipart request body (OpenAPI 3.1 § 4.8.15): per
//! property, `style` / `explode` / `allowReserved` for `application/x-www-form-urlencoded`,
//! and the part's `contentType` for `multipart/form-data`, defaulted from the property's
//! schema (`contentMediaType`, `format: binary`, `contentEncoding`) when not written.

use std::collections::BTreeMap;

use mcp_adapter_rest::operation::{Encoding, PartEncoding};
use serde_json::Value;

use crate::params::style;
use crate::schema::Schemas;

/// How each named property of the body in `media` (a Media Type Object of document `doc`)
/// is written; empty for JSON and text bodies.
pub fn parts(
    schemas: &Schemas<'_>,
    doc: usize,
    media: &Value,
    encoding: Encoding,
) -> Result<BTreeMap<String, PartEncoding>, String> {
    let mut parts = BTreeMap::new();
    let written = media.get("encoding").and_then(Value::as_object);
    match encoding {
        Encoding::Json | Encoding::Text => {}
        // § 4.8.15.1: style, explode and allowReserved are ignored for any other media type.
        Encoding::Form => {
            for (name, e) in written.into_iter().flatten() {
                let part = PartEncoding {
                    content_type: None,
                    style: style(e).map_err(|other| {
                        format!("the requestBody's encoding of '{name}' has an unknown style '{other}'")
                    })?,
                    explode: e.get("explode").and_then(Value::as_bool),
                    allow_reserved: e.get("allowReserved").and_then(Value::as_bool).unwrap_or(false),
                };
                parts.insert(name.clone(), part);
            }
        }
        Encoding::Multipart => {
            let properties = media
                .get("schema")
                .and_then(|s| schemas.deref(doc, s).ok())
                .and_then(|(d, s)| Some((d, s.get("properties")?.as_object()?)));
            for (d, (name, schema)) in properties.into_iter().flat_map(|(d, props)| props.iter().map(move |p| (d, p))) {
                if let Some(ct) = schemas.deref(d, schema).ok().and_then(|(d, s)| default_type(schemas, d, s)) {
                    parts.insert(name.clone(), PartEncoding { content_type: Some(ct), ..PartEncoding::default() });
                }
            }
            for (name, e) in written.into_iter().flatten() {
                if let Some(ct) = e.get("contentType").and_then(Value::as_str).filter(|ct| header_safe(ct)) {
                    parts.entry(name.clone()).or_default().content_type = Some(ct.to_owned());
                }
            }
        }
    }
    Ok(parts)
}

/// A part's type from its schema when the Encoding Object names none (§ 4.8.15.1 and
/// § 4.8.14.3, binary data): `contentMediaType` (3.1), else `application/octet-stream` for
/// binary (3.0 `format: binary`, or a `contentEncoding`); an array's items decide for it.
/// `None`: the runtime's default (text for a string, JSON otherwise).
fn default_type(schemas: &Schemas<'_>, doc: usize, schema: &Value) -> Option<String> {
    if schema.get("type").and_then(Value::as_str) == Some("array") {
        let (d, items) = schemas.deref(doc, schema.get("items")?).ok()?;
        return default_type(schemas, d, items);
    }
    if let Some(ct) = schema.get("contentMediaType").and_then(Value::as_str).filter(|ct| header_safe(ct)) {
        return Some(ct.to_owned());
    }
    let binary =
        schema.get("format").and_then(Value::as_str) == Some("binary") || schema.get("contentEncoding").is_some();
    binary.then(|| "application/octet-stream".to_owned())
}

/// Printable ASCII only: a type from the document never breaks out of the part's header.
fn header_safe(ct: &str) -> bool {
    !ct.trim().is_empty() && ct.bytes().all(|c| (0x20..0x7f).contains(&c))
}
