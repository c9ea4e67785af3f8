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
use crate::token_exchange::TokenExchange;

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
}

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
                    let text = path_value(p, v)?;
                    path.push_str(&text);
                }
            }
        }
        let mut query: Vec<(String, String)> = Vec::new();
        let mut cookies: Vec<String> = Vec::new();
        let mut headers = HeaderMap::new();
        for p in &self.params {
            let Some(v) = arg(args, &p.argument) else { continue };
            match p.location {
                Location::Path => {}
                Location::Query => query_pairs(p, v, &mut query),
                Location::Cookie => {
                    let mut pairs = Vec::new();
                    query_pairs(p, v, &mut pairs);
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
                    let (bytes, content_type) = encode_body(b, v)?;
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

/// `name=value` pairs, both already encoded, for a query (or cookie) parameter.
fn query_pairs(p: &Param, v: &Value, out: &mut Vec<(String, String)>) {
    let set = if p.allow_reserved { RESERVED_KEPT } else { COMPONENT };
    let e = |s: &str| enc(s, set);
    let name = enc(&p.name, COMPONENT);
    match (p.style, v) {
        (Style::DeepObject, Value::Object(map)) => {
            out.extend(map.iter().map(|(k, v)| (format!("{name}[{}]", e(k)), e(&leaf(v)))));
        }
        (_, Value::Object(map)) if p.explode => out.extend(map.iter().map(|(k, v)| (e(k), e(&leaf(v))))),
        (_, Value::Array(items)) if p.explode => out.extend(items.iter().map(|i| (name.clone(), e(&leaf(i))))),
        (Style::SpaceDelimited, v) => out.push((name, delimited(v, "%20", false, e))),
        (Style::PipeDelimited, v) => out.push((name, delimited(v, "|", false, e))),
        (_, v) => out.push((name, delimited(v, ",", false, e))),
    }
}

/// The body bytes and the `Content-Type` to send.
fn encode_body(b: &BodyParam, v: &Value) -> Result<(Bytes, String), AdapterError> {
    let object = || {
        v.as_object().ok_or_else(|| {
            AdapterError::invalid_argument(&b.argument, format!("must be an object for a {} body", b.content_type))
        })
    };
    let json = |v: &Value| serde_json::to_vec(v).map_err(|e| AdapterError::Internal(format!("JSON body: {e}")));
    Ok(match b.encoding {
        Encoding::Json => (Bytes::from(json(v)?), b.content_type.clone()),
        Encoding::Text => match v {
            Value::String(s) => (Bytes::from(s.clone()), b.content_type.clone()),
            other => (Bytes::from(json(other)?), b.content_type.clone()),
        },
        Encoding::Form => {
            let mut pairs = Vec::new();
            for (k, v) in object()? {
                let items: Vec<&Value> = match v {
                    Value::Array(items) => items.iter().collect(),
                    Value::Null => Vec::new(),
                    one => vec![one],
                };
                pairs.extend(items.into_iter().map(|i| format!("{}={}", enc(k, COMPONENT), enc(&leaf(i), COMPONENT))));
            }
            (Bytes::from(pairs.join("&")), b.content_type.clone())
        }
        Encoding::Multipart => {
            let boundary: String = std::iter::repeat_with(fastrand::alphanumeric).take(32).collect();
            let mut out = Vec::new();
            for (k, v) in object()? {
                let items: Vec<&Value> = match v {
                    Value::Array(items) => items.iter().collect(),
                    Value::Null => Vec::new(),
                    one => vec![one],
                };
                for item in items {
                    // Field names escaped as the HTML standard's multipart/form-data encoding does.
                    let name = k.replace('"', "%22").replace('\r', "%0D").replace('\n', "%0A");
                    let (ct, data) = match item {
                        Value::String(s) => ("text/plain; charset=utf-8", s.clone().into_bytes()),
                        other => ("application/json", json(other)?),
                    };
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
            (Bytes::from(out), format!("multipart/form-data; boundary={boundary}"))
        }
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn param(name: &str, location: Location, style: Style, explode: bool) -> Param {
        Param { name: name.to_owned(), argument: name.to_owned(), location, style, explode, allow_reserved: false }
    }

    fn run(op: &Operation, args: Value) -> (String, HeaderMap, Option<Bytes>) {
        op.prepare(args.as_object().unwrap()).unwrap()
    }

    #[test]
    fn path_styles_follow_the_spec_examples() {
        let v = json!({"id": [3, 4, 5]});
        let cases = [
            (Style::Simple, false, "/u/3,4,5"),
            (Style::Label, false, "/u/.3,4,5"),
            (Style::Label, true, "/u/.3.4.5"),
            (Style::Matrix, false, "/u/;id=3,4,5"),
            (Style::Matrix, true, "/u/;id=3;id=4;id=5"),
        ];
        for (style, explode, want) in cases {
            let op =
                Operation::new("/u/{id}", vec![param("id", Location::Path, style, explode)], None, vec![]).unwrap();
            assert_eq!(run(&op, v.clone()).0, want, "{style:?} explode={explode}");
        }
        let op =
            Operation::new("/u/{id}", vec![param("id", Location::Path, Style::Simple, true)], None, vec![]).unwrap();
        assert_eq!(run(&op, json!({"id": {"role": "admin", "n": 5}})).0, "/u/n=5,role=admin");
        assert_eq!(run(&op, json!({"id": "a/b?c"})).0, "/u/a%2Fb%3Fc");
        let e = op.prepare(json!({"id": ".."}).as_object().unwrap()).unwrap_err();
        assert!(matches!(e, AdapterError::InvalidArguments { .. }));
    }

    #[test]
    fn empty_arrays_and_objects_are_refused_like_empty_strings() {
        for style in [Style::Simple, Style::Label, Style::Matrix] {
            let op = Operation::new(
                "/items/{id}/{ids}",
                vec![param("id", Location::Path, style, false), param("ids", Location::Path, style, false)],
                None,
                vec![],
            )
            .unwrap();
            for empty in [json!([]), json!({}), json!([""]), json!("")] {
                let e = op.prepare(json!({"id": "A", "ids": empty}).as_object().unwrap()).unwrap_err();
                assert!(
                    e.to_string()
                        .contains("is not allowed as a path value (empty, '.' and '..' would change the path)"),
                    "{style:?} {empty}: {e}"
                );
            }
        }
    }

    #[test]
    fn reserved_expansion_keeps_slashes_but_never_dot_segments() {
        let op = Operation::new(
            "/v1/{+name}:cancel",
            vec![param("name", Location::Path, Style::Simple, false)],
            None,
            vec![],
        )
        .unwrap();
        assert_eq!(run(&op, json!({"name": "projects/p 1/ops/7"})).0, "/v1/projects/p%201/ops/7:cancel");
        assert!(op.prepare(json!({"name": "projects/../admin"}).as_object().unwrap()).is_err());
    }

    #[test]
    fn query_cookie_and_header_parameters() {
        let op = Operation::new(
            "/s",
            vec![
                param("tag", Location::Query, Style::Form, true),
                param("ids", Location::Query, Style::Form, false),
                param("p", Location::Query, Style::PipeDelimited, false),
                param("f", Location::Query, Style::DeepObject, true),
                param("sess", Location::Cookie, Style::Form, false),
                param("X-Trace", Location::Header, Style::Simple, false),
            ],
            None,
            vec![Credential::Query("api_key".into(), Secret::new(b"k&1".to_vec()))],
        )
        .unwrap();
        let (pq, h, _) = run(
            &op,
            json!({"tag": ["a", "b c"], "ids": [1, 2], "p": ["x", "y"], "f": {"min": 1}, "sess": "s1", "X-Trace": ["t", "u"]}),
        );
        assert_eq!(pq, "/s?tag=a&tag=b%20c&ids=1,2&p=x|y&f[min]=1&api_key=k%261");
        assert_eq!(h["cookie"], "sess=s1");
        assert_eq!(h["x-trace"], "t,u");
        let e = op.prepare(json!({"X-Trace": "a\r\nHost: evil"}).as_object().unwrap()).unwrap_err();
        assert!(matches!(e, AdapterError::InvalidArguments { field: Some(ref f), .. } if f == "X-Trace"));
    }

    #[test]
    fn bodies_in_each_encoding() {
        let body = |encoding, ct: &str| {
            let b = BodyParam { argument: "body".into(), encoding, content_type: ct.into() };
            Operation::new("/b", vec![], Some(b), vec![]).unwrap()
        };
        let args = json!({"body": {"name": "a b", "tags": ["x", "y"], "meta": {"k": 1}}});
        let (_, h, b) = run(&body(Encoding::Form, "application/x-www-form-urlencoded"), args.clone());
        assert_eq!(h["content-type"], "application/x-www-form-urlencoded");
        assert_eq!(b.unwrap(), "meta=%7B%22k%22%3A1%7D&name=a%20b&tags=x&tags=y");
        let (_, h, b) = run(&body(Encoding::Multipart, "multipart/form-data"), args.clone());
        let ct = h["content-type"].to_str().unwrap();
        let boundary = ct.strip_prefix("multipart/form-data; boundary=").unwrap();
        let text = String::from_utf8(b.unwrap().to_vec()).unwrap();
        assert!(text.starts_with(&format!("--{boundary}\r\nContent-Disposition: form-data; name=\"meta\"")), "{text}");
        assert_eq!(text.matches("name=\"tags\"").count(), 2);
        assert!(text.ends_with(&format!("--{boundary}--\r\n")));
        let (_, h, b) = run(&body(Encoding::Json, "application/json"), args);
        assert_eq!(h["content-type"], "application/json");
        assert_eq!(serde_json::from_slice::<Value>(&b.unwrap()).unwrap()["name"], "a b");
        let e =
            body(Encoding::Form, "application/x-www-form-urlencoded").prepare(json!({"body": 3}).as_object().unwrap());
        assert!(e.is_err());
    }

    #[test]
    fn unbound_template_variables_are_refused() {
        assert!(Operation::new("/u/{id}", vec![], None, vec![]).is_err());
        assert!(Operation::new("/u", vec![param("id", Location::Path, Style::Simple, false)], None, vec![]).is_err());
        assert!(format!("{:?}", Credential::header("X-Key", "s3cr3t").unwrap()).contains("redacted"));
    }
}
