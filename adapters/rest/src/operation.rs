//! Requests described parameter by parameter, the way OpenAPI describes them: each parameter
//! has a location (path, query, header, cookie), a style and `explode` (OpenAPI 3.1 § 4.8.12.4
//! Style Values), and the body is JSON, `application/x-www-form-urlencoded`,
//! `multipart/form-data` or text. A library API for adapters that generate tools (the OpenAPI
//! adapter); argument values stay inert exactly as in [`crate::template`]: a path value never
//! changes the path's shape, a header value never carries CR/LF, the host comes from the pool.

use std::sync::Arc;

use bytes::Bytes;
use mcp_adapter_api::{AdapterError, Secret};
use percent_encoding::{AsciiSet, utf8_percent_encode};
use reqwest::header::{CONTENT_TYPE, COOKIE, HeaderMap, HeaderName, HeaderValue};
use serde_json::{Map, Value};

use crate::template::{COMPONENT, arg};

mod body;

use crate::token_exchange::TokenExchange;
pub use body::{BodyParam, Encoding, PartEncoding};

/// `allowReserved` / RFC 6570 `{+var}`: the reserved characters stay as they are, so a
/// `projects/p1/topics/t1` value keeps its slashes (dot segments are still refused).
const RESERVED_KEPT: &AsciiSet = &COMPONENT
    .remove(b'/')
    .remove(b':')
    .remove(b'@')
    .remove(b'!')
    .remove(b'$')
    .remove(b'\'')
    .remove(b'(')
    .remove(b')')
    .remove(b'*')
    .remove(b'+')
    .remove(b',')
    .remove(b';')
    .remove(b'=');

/// Where a parameter goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Location {
    /// A `{name}` of the path template.
    Path,
    /// The query string.
    Query,
    /// A request header.
    Header,
    /// The `Cookie` header.
    Cookie,
}

/// How a value is written (OpenAPI `style`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    /// `a,b` (path and header default).
    Simple,
    /// `.a.b`.
    Label,
    /// `;id=a,b`.
    Matrix,
    /// `id=a&id=b` (query and cookie default).
    Form,
    /// `id=a%20b`.
    SpaceDelimited,
    /// `id=a|b`.
    PipeDelimited,
    /// `id[k]=v`.
    DeepObject,
}

impl Style {
    /// The style OpenAPI assumes when none is written.
    pub fn default_for(location: Location) -> Self {
        match location {
            Location::Path | Location::Header => Self::Simple,
            Location::Query | Location::Cookie => Self::Form,
        }
    }
}

/// One parameter: its wire name, the argument it comes from, and how it is written.
#[derive(Debug, Clone)]
pub struct Param {
    /// Name on the wire (`petId`, `X-Request-Id`).
    pub name: String,
    /// The tool argument holding the value.
    pub argument: String,
    /// Where it goes.
    pub location: Location,
    /// How it is written.
    pub style: Style,
    /// `explode`.
    pub explode: bool,
    /// `allowReserved` (or `{+name}` in the path): reserved characters are not encoded.
    pub allow_reserved: bool,
    /// The media type of a parameter described by `content` instead of `schema` (OpenAPI
    /// 3.1 § 4.8.12.2, Fixed Fields for use with `content`): the value is written as one
    /// text in that type (JSON text for a JSON type), then percent-encoded as one value;
    /// `style` and `explode` do not apply.
    pub content: Option<String>,
}

/// A credential placed by the operation itself (each operation of an API may need another
/// one). Values are sensitive: `Debug` never shows them, headers are marked sensitive.
#[derive(Clone)]
pub enum Credential {
    /// A header (`Authorization: Bearer ...`, `X-Api-Key: ...`).
    Header(HeaderName, HeaderValue),
    /// A query parameter (`?api_key=...`); the URL is logged without its query.
    Query(String, Secret),
    /// A cookie.
    Cookie(String, Secret),
    /// `Authorization: Bearer` with a token exchanged per caller at call time (RFC 8693).
    Exchanged(Arc<TokenExchange>),
}

impl std::fmt::Debug for Credential {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Header(n, _) => write!(f, "Credential::Header({n}, [redacted])"),
            Self::Query(n, _) => write!(f, "Credential::Query({n}, [redacted])"),
            Self::Cookie(n, _) => write!(f, "Credential::Cookie({n}, [redacted])"),
            Self::Exchanged(x) => write!(f, "Credential::Exchanged({x:?})"),
        }
    }
}

impl Credential {
    /// A header credential from a secret; fails (without quoting it) when a header cannot
    /// carry it.
    pub fn header(name: &str, value: &str) -> Result<Self, String> {
        let name = HeaderName::from_bytes(name.as_bytes()).map_err(|_| format!("'{name}' is not a header name"))?;
        let mut value =
            HeaderValue::from_str(value).map_err(|_| "the secret contains characters a header cannot carry")?;
        value.set_sensitive(true);
        Ok(Self::Header(name, value))
    }
}

#[derive(Debug, Clone)]
enum Segment {
    Lit(String),
    /// Index into `params`.
    Var(usize),
}

/// An operation compiled: path segments bound to parameters, the rest by location.
#[derive(Debug, Clone)]
pub struct Operation {
    path: Vec<Segment>,
    params: Vec<Param>,
    body: Option<BodyParam>,
    credentials: Vec<Credential>,
}

impl Operation {
    /// Binds the OpenAPI path template (`/pets/{petId}`, `/v1/{+name}:cancel`) to `params`.
    /// Fails when a `{name}` has no path parameter, or a path parameter no `{name}`.
    pub fn new(
        path: &str,
        mut params: Vec<Param>,
        body: Option<BodyParam>,
        credentials: Vec<Credential>,
    ) -> Result<Self, String> {
        if !path.starts_with('/') {
            return Err(format!("path '{path}' must start with '/'"));
        }
        let mut segments = Vec::new();
        let mut rest = path;
        while let Some(open) = rest.find('{') {
            let close = rest[open..].find('}').map(|c| open + c).ok_or_else(|| format!("unclosed '{{' in '{path}'"))?;
            segments.push(Segment::Lit(encode_literal(&rest[..open])));
            let var = &rest[open + 1..close];
            let (reserved, var) = match var.strip_prefix('+') {
                Some(v) => (true, v),
                None => (false, var),
            };
            let i = params
                .iter()
                .position(|p| p.location == Location::Path && p.name == var)
                .ok_or_else(|| format!("path template variable {{{var}}} has no path parameter"))?;
            params[i].allow_reserved |= reserved;
            segments.push(Segment::Var(i));
            rest = &rest[close + 1..];
        }
        segments.push(Segment::Lit(encode_literal(rest)));
        for (i, p) in params.iter().enumerate() {
            if p.location == Location::Path && !segments.iter().any(|s| matches!(s, Segment::Var(j) if *j == i)) {
                return Err(format!("path parameter '{}' does not appear in the path", p.name));
            }
        }
        Ok(Self { path: segments, params, body, credentials })
    }

    /// The parameters.
    pub fn params(&self) -> &[Param] {
        &self.params
    }

    /// The token exchange whose per-caller token this operation sends, if any.
    pub fn exchange(&self) -> Option<&Arc<TokenExchange>> {
        self.credentials.iter().find_map(|c| match c {
            Credential::Exchanged(x) => Some(x),
            _ => None,
        })
    }

    /// Renders path and query, headers and body for validated `args`.
    pub(crate) fn prepare(
        &self,
        args: &Map<String, Value>,
    ) -> Result<(String, HeaderMap, Option<Bytes>), AdapterError> {
        let mut path = String::with_capacity(64);
        for s in &self.path {
            match s {
                Segment::Lit(l) => path.push_str(l),
                Segment::Var(i) => {
                    let p = &self.params[*i];
                    let v = arg(args, &p.argument).ok_or_else(|| {
                        AdapterError::invalid_argument(&p.argument, "is required: it is part of the path")
                    })?;
                    let text = match &p.content {
                        Some(ct) => path_value(p, &content_value(ct, v))?,
                        None => path_value(p, v)?,
                    };
                    path.push_str(&text);
                }
            }
        }
        let mut query: Vec<(String, String)> = Vec::new();
        let mut cookies: Vec<String> = Vec::new();
        let mut headers = HeaderMap::new();
        for p in &self.params {
            let Some(v) = arg(args, &p.argument) else { continue };
            let as_content = p.content.as_deref().map(|ct| content_value(ct, v));
            let v = as_content.as_ref().unwrap_or(v);
            match p.location {
                Location::Path => {}
                Location::Query => query_pairs(&p.name, p.style, p.explode, p.allow_reserved, v, &mut query),
                Location::Cookie => {
                    let mut pairs = Vec::new();
                    query_pairs(&p.name, p.style, p.explode, p.allow_reserved, v, &mut pairs);
                    cookies.extend(pairs.into_iter().map(|(n, v)| format!("{n}={v}")));
                }
                Location::Header => {
                    let text = delimited(v, ",", p.explode, |s| s.to_owned());
                    let value = HeaderValue::from_str(&text).map_err(|_| {
                        AdapterError::invalid_argument(&p.argument, format!("cannot be sent in the {} header", p.name))
                    })?;
                    let name = HeaderName::from_bytes(p.name.as_bytes())
                        .map_err(|_| AdapterError::Internal(format!("header name {}", p.name)))?;
                    headers.insert(name, value);
                }
            }
        }
        for c in &self.credentials {
            match c {
                Credential::Header(n, v) => {
                    headers.insert(n.clone(), v.clone());
                }
                Credential::Query(n, s) => query.push((enc(n, COMPONENT), enc(s.expose_str(), COMPONENT))),
                Credential::Cookie(n, s) => cookies.push(format!("{n}={}", enc(s.expose_str(), COMPONENT))),
                // Added by the adapter per call (it needs the caller): see `Operation::exchange`.
                Credential::Exchanged(_) => {}
            }
        }
        for (i, (n, v)) in query.iter().enumerate() {
            path.push(if i == 0 { '?' } else { '&' });
            path.push_str(n);
            path.push('=');
            path.push_str(v);
        }
        if !cookies.is_empty() {
            let mut value = HeaderValue::from_str(&cookies.join("; "))
                .map_err(|_| AdapterError::invalid_argument("cookie", "cannot be sent in the Cookie header"))?;
            value.set_sensitive(true);
            headers.insert(COOKIE, value);
        }
        let body = match &self.body {
            None => None,
            Some(b) => match arg(args, &b.argument) {
                None => None,
                Some(v) => {
                    let (bytes, content_type) = body::encode(b, v)?;
                    let ct = HeaderValue::from_str(&content_type)
                        .map_err(|_| AdapterError::Internal(format!("content type {content_type}")))?;
                    headers.insert(CONTENT_TYPE, ct);
                    Some(bytes)
                }
            },
        };
        Ok((path, headers, body))
    }
}

fn enc(s: &str, set: &'static AsciiSet) -> String {
    utf8_percent_encode(s, set).to_string()
}

/// Literal path text from a spec: kept where it is a valid path character, encoded elsewhere
/// (a space in a real-world spec's path must not break the request line).
fn encode_literal(text: &str) -> String {
    const LITERAL: &AsciiSet = &RESERVED_KEPT.remove(b'&').remove(b'%').remove(b'.').remove(b'~');
    enc(text, LITERAL)
}

/// The text of a leaf value; arrays and objects nested deeper are written as JSON.
fn leaf(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// Items of an array or an object's `k=v` / `k,v` pairs joined by `sep`; a scalar as it is.
fn delimited(v: &Value, sep: &str, explode: bool, e: impl Fn(&str) -> String) -> String {
    match v {
        Value::Array(items) => items.iter().map(|i| e(&leaf(i))).collect::<Vec<_>>().join(sep),
        Value::Object(map) => map
            .iter()
            .map(
                |(k, v)| {
                    if explode { format!("{}={}", e(k), e(&leaf(v))) } else { format!("{},{}", e(k), e(&leaf(v))) }
                },
            )
            .collect::<Vec<_>>()
            .join(sep),
        scalar => e(&leaf(scalar)),
    }
}

/// A path value: one or more encoded segment parts that can never add or climb a segment.
fn path_value(p: &Param, v: &Value) -> Result<String, AdapterError> {
    let set = if p.allow_reserved { RESERVED_KEPT } else { COMPONENT };
    // An empty array or object expands to nothing (RFC 6570 § 3.2.1: an empty list is
    // undefined), which would leave an empty segment (`/items/A/`) just as `""` does.
    let empty = match v {
        Value::Array(items) => items.is_empty().then_some("[]"),
        Value::Object(map) => map.is_empty().then_some("{}"),
        _ => None,
    };
    let bad = empty
        .map(str::to_owned)
        .or_else(|| path_texts(v).find(|t| t.is_empty() || t.split('/').any(|s| s == "." || s == "..")));
    if let Some(bad) = bad {
        return Err(AdapterError::invalid_argument(
            &p.argument,
            format!("'{bad}' is not allowed as a path value (empty, '.' and '..' would change the path)"),
        ));
    }
    let e = |s: &str| enc(s, set);
    let explode = p.explode;
    Ok(match p.style {
        Style::Label => {
            let sep = if explode { "." } else { "," };
            format!(".{}", delimited(v, sep, explode, e))
        }
        Style::Matrix => match v {
            Value::Array(items) if explode => items.iter().map(|i| format!(";{}={}", p.name, e(&leaf(i)))).collect(),
            Value::Object(map) if explode => map.iter().map(|(k, v)| format!(";{}={}", e(k), e(&leaf(v)))).collect(),
            other => format!(";{}={}", p.name, delimited(other, ",", false, e)),
        },
        _ => delimited(v, ",", explode, e),
    })
}

fn path_texts(v: &Value) -> Box<dyn Iterator<Item = String> + '_> {
    match v {
        Value::Array(items) => Box::new(items.iter().map(leaf)),
        Value::Object(map) => Box::new(map.values().map(leaf)),
        scalar => Box::new(std::iter::once(leaf(scalar))),
    }
}

/// The one text a `content` parameter's value is written as: JSON text for a JSON media
/// type (`application/json`, `*+json`), a string as it is otherwise.
fn content_value(content_type: &str, v: &Value) -> Value {
    let essence = content_type.split(';').next().unwrap_or_default().trim().to_ascii_lowercase();
    match v {
        Value::String(s) if !(essence == "application/json" || essence.ends_with("+json")) => Value::String(s.clone()),
        other => Value::String(other.to_string()),
    }
}

/// `name=value` pairs, both already encoded, for a query (or cookie) parameter or a property
/// of a form body (they follow the same rules: OpenAPI 3.1 § 4.8.15.1).
fn query_pairs(
    name: &str,
    style: Style,
    explode: bool,
    allow_reserved: bool,
    v: &Value,
    out: &mut Vec<(String, String)>,
) {
    let set = if allow_reserved { RESERVED_KEPT } else { COMPONENT };
    let e = |s: &str| enc(s, set);
    let name = enc(name, COMPONENT);
    match (style, v) {
        (Style::DeepObject, Value::Object(map)) => {
            out.extend(map.iter().map(|(k, v)| (format!("{name}[{}]", e(k)), e(&leaf(v)))));
        }
        (_, Value::Object(map)) if explode => out.extend(map.iter().map(|(k, v)| (e(k), e(&leaf(v))))),
        (_, Value::Array(items)) if explode => out.extend(items.iter().map(|i| (name.clone(), e(&leaf(i))))),
        (Style::SpaceDelimited, v) => out.push((name, delimited(v, "%20", false, e))),
        (Style::PipeDelimited, v) => out.push((name, delimited(v, "|", false, e))),
        (_, v) => out.push((name, delimited(v, ",", false, e))),
    }
}

#[cfg(test)]
mod tests;
