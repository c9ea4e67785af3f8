//! The request body's bytes: JSON, text, `application/x-www-form-urlencoded` and
//! `multipart/form-data`, each property of a form or multipart body written as its Encoding
//! Object says (OpenAPI 3.1 § 4.8.15).

use bytes::Bytes;
use mcp_adapter_api::AdapterError;
use serde_json::Value;

use std::collections::BTreeMap;

use super::{Style, query_pairs};

/// How the body argument becomes bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    /// The value as JSON.
    Json,
    /// An object as `application/x-www-form-urlencoded`.
    Form,
    /// An object as `multipart/form-data`, one part per property.
    Multipart,
    /// A string sent as it is (`text/plain`, XML, ...).
    Text,
}

/// The request body: the argument holding it, its encoding and `Content-Type`.
#[derive(Debug, Clone)]
pub struct BodyParam {
    /// The tool argument holding the body.
    pub argument: String,
    /// How it is encoded.
    pub encoding: Encoding,
    /// The media type sent (`application/json`, `application/vnd.api+json`, ...).
    pub content_type: String,
    /// How named properties of a form or multipart body are written (the Encoding Object);
    /// a property not named here takes the defaults of [`PartEncoding`].
    pub parts: BTreeMap<String, PartEncoding>,
}

/// How one property of a form or multipart body is written: OpenAPI 3.1 § 4.8.15 Encoding
/// Object. `style`, `explode` and `allowReserved` apply to `application/x-www-form-urlencoded`
/// bodies only, `content_type` to `multipart/form-data` bodies only (§ 4.8.15.1).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PartEncoding {
    /// The part's `Content-Type`; `None`: `text/plain; charset=utf-8` for a string,
    /// `application/json` for anything else.
    pub content_type: Option<String>,
    /// `style`; `None`: `form` (§ 4.8.15.1), except that an object value with no encoding
    /// entry at all is written `deepObject` (`address[city]=Paris`), see `body.rs`.
    pub style: Option<Style>,
    /// `explode`; `None`: true for `form`, false otherwise (§ 4.8.15.1).
    pub explode: Option<bool>,
    /// `allowReserved`.
    pub allow_reserved: bool,
}

/// The body bytes and the `Content-Type` to send.
pub(super) fn encode(b: &BodyParam, v: &Value) -> Result<(Bytes, String), AdapterError> {
    let object = || {
        v.as_object().ok_or_else(|| {
            AdapterError::invalid_argument(&b.argument, format!("must be an object for a {} body", b.content_type))
        })
    };
    Ok(match b.encoding {
        Encoding::Json => (Bytes::from(json(v)?), b.content_type.clone()),
        Encoding::Text => match v {
            Value::String(s) => (Bytes::from(s.clone()), b.content_type.clone()),
            other => (Bytes::from(json(other)?), b.content_type.clone()),
        },
        Encoding::Form => {
            let mut pairs = Vec::new();
            for (k, v) in object()?.iter().filter(|(_, v)| !v.is_null()) {
                let (style, explode, allow_reserved) = form_rules(b.parts.get(k), v);
                query_pairs(k, style, explode, allow_reserved, v, &mut pairs);
            }
            let text: Vec<String> = pairs.into_iter().map(|(n, v)| format!("{n}={v}")).collect();
            (Bytes::from(text.join("&")), b.content_type.clone())
        }
        Encoding::Multipart => multipart(b, object()?)?,
    })
}

fn json(v: &Value) -> Result<Vec<u8>, AdapterError> {
    serde_json::to_vec(v).map_err(|e| AdapterError::Internal(format!("JSON body: {e}")))
}

/// `style`, `explode` and `allowReserved` of one form property. OpenAPI 3.1 § 4.8.15.1: the
/// defaults are those of a query parameter (`form`, exploded). An object value whose
/// encoding names no style is written `deepObject` (`address[city]=Paris`): `form` would
/// drop the property's name (`city=Paris`), which no form-reading server can map back, and
/// JSON text in a form field is what nobody reads either.
fn form_rules(part: Option<&PartEncoding>, v: &Value) -> (Style, bool, bool) {
    let style = match part.and_then(|p| p.style) {
        Some(style) => style,
        None if v.is_object() => Style::DeepObject,
        None => Style::Form,
    };
    let explode = part.and_then(|p| p.explode).unwrap_or(matches!(style, Style::Form | Style::DeepObject));
    (style, explode, part.is_some_and(|p| p.allow_reserved))
}

/// One part per property (one per item of an array), each with its `Content-Type`: the
/// Encoding Object's `contentType` (the first of a list), else `text/plain; charset=utf-8`
/// for a string and `application/json` for anything else (OpenAPI 3.1 § 4.8.15.1 defaults,
/// with UTF-8 said out loud).
fn multipart(b: &BodyParam, object: &serde_json::Map<String, Value>) -> Result<(Bytes, String), AdapterError> {
    let boundary: String = std::iter::repeat_with(fastrand::alphanumeric).take(32).collect();
    let mut out = Vec::new();
    for (k, v) in object {
        let items: Vec<&Value> = match v {
            Value::Array(items) => items.iter().collect(),
            Value::Null => Vec::new(),
            one => vec![one],
        };
        let declared = b.parts.get(k).and_then(|p| p.content_type.as_deref());
        // From the document: kept only when it cannot break out of the part's header.
        let declared = declared
            .and_then(|ct| ct.split(',').next())
            .map(str::trim)
            .filter(|ct| !ct.is_empty() && ct.bytes().all(|c| (0x20..0x7f).contains(&c)));
        for item in items {
            // Field names escaped as the HTML standard's multipart/form-data encoding does.
            let name = k.replace('"', "%22").replace('\r', "%0D").replace('\n', "%0A");
            let (default, data) = match item {
                Value::String(s) => ("text/plain; charset=utf-8", s.clone().into_bytes()),
                other => ("application/json", json(other)?),
            };
            let ct = declared.unwrap_or(default);
            out.extend_from_slice(
                format!(
                    "--{boundary}\r\nContent-Disposition: form-data; name=\"{name}\"\r\nContent-Type: {ct}\r\n\r\n"
                )
                .as_bytes(),
            );
            out.extend_from_slice(&data);
            out.extend_from_slice(b"\r\n");
        }
    }
    out.extend_from_slice(format!("--{boundary}--\r\n").as_bytes());
    Ok((Bytes::from(out), format!("multipart/form-data; boundary={boundary}")))
}
