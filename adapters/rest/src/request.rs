//! Request building: a tool's config compiled once at load into a [`Plan`], and per call the
//! [`Prepared`] request (path and query, headers, body) built from validated arguments.

use bytes::Bytes;
use mcp_adapter_api::{AdapterError, Problems, ToolSpec};
use reqwest::Method;
use reqwest::header::{CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};
use serde_json::{Map, Value};

use crate::config::{BodyConfig, ConfigProblem, RawTool, WholeBody};
use crate::operation::Operation;
use crate::template::{BodyNode, PathTemplate, QueryParam, Template};

/// One tool's request, compiled.
#[derive(Debug, Clone)]
pub struct Plan {
    /// HTTP method.
    pub method: Method,
    /// May be retried (the method's idempotency or the tool's `idempotent` override).
    pub idempotent: bool,
    shape: Shape,
    /// A base URL of the plan's own instead of the adapter's `base_urls` ([`Plan::on_server`]).
    server: Option<String>,
    /// The executor's pool for this plan (0: the adapter's), set by [`crate::Rest::with_plans`].
    pub(crate) pool: usize,
}

/// How the request is described: a hand-written tool's templates, or an operation's
/// parameters ([`crate::operation`]).
#[derive(Debug, Clone)]
enum Shape {
    Templates(Box<Templates>),
    Operation(Box<Operation>),
}

#[derive(Debug, Clone)]
struct Templates {
    path: PathTemplate,
    query: Vec<QueryParam>,
    headers: Vec<(HeaderName, Template)>,
    body: Option<Body>,
}

#[derive(Debug, Clone)]
enum Body {
    /// The arguments object; `Some(names)`: only these (the schema's declared properties) may
    /// be sent, `None`: the schema allows more (`additionalProperties` or `patternProperties`).
    Arguments(Option<Vec<String>>),
    Fields(BodyNode),
}

/// Mass assignment: with `body = "arguments"`, a property the schema does not declare would
/// reach the upstream (an `is_admin` the API binds to its model) whenever the author forgot
/// `additionalProperties = false`. So undeclared properties are refused unless the schema
/// says otherwise: writing `additionalProperties` (`true`, or a schema) or `patternProperties`
/// is the tool's explicit opt-out.
fn declared_only(schema: &Value) -> Option<Vec<String>> {
    if schema.get("additionalProperties").is_some() || schema.get("patternProperties").is_some() {
        return None;
    }
    let props = schema.get("properties").and_then(Value::as_object);
    Some(props.map(|p| p.keys().cloned().collect()).unwrap_or_default())
}

/// A request ready to go to any upstream of the pool.
#[derive(Debug, Clone)]
pub struct Prepared {
    /// Encoded path and query, appended to an upstream's base URL.
    pub path_and_query: String,
    /// Tool headers (the client adds the adapter's fixed headers and credentials).
    pub headers: HeaderMap,
    /// JSON body.
    pub body: Option<Bytes>,
}

/// Headers a tool may not set: framing and routing belong to the client, and the credential
/// header belongs to `[adapters.auth]`.
pub fn check_header_name(name: &str, credential: Option<&HeaderName>) -> Result<HeaderName, String> {
    let h = HeaderName::from_bytes(name.as_bytes()).map_err(|_| format!("'{name}' is not a header name"))?;
    const RESERVED: [&str; 9] = [
        "host",
        "content-length",
        "transfer-encoding",
        "connection",
        "keep-alive",
        "upgrade",
        "te",
        "trailer",
        "expect",
    ];
    if RESERVED.contains(&h.as_str()) || h.as_str().starts_with("proxy-") {
        return Err(format!("'{name}' is set by the HTTP client and cannot be configured"));
    }
    if credential == Some(&h) {
        return Err(format!("'{name}' carries the credential of [auth] and cannot be set here"));
    }
    Ok(h)
}

impl Plan {
    /// The token exchange this plan's own credentials name (an operation's security scheme).
    pub fn exchange(&self) -> Option<&std::sync::Arc<crate::token_exchange::TokenExchange>> {
        match &self.shape {
            Shape::Templates(_) => None,
            Shape::Operation(op) => op.exchange(),
        }
    }

    /// Compiles `raw` (config key `key`, e.g. `tools.get_user`) into a plan and the listed
    /// tool, or every problem of it.
    pub fn compile(raw: &RawTool, key: &str, credential: Option<&HeaderName>) -> Result<(Self, ToolSpec), Problems> {
        let mut problems = raw.check();
        let mut at = |k: &str, p: String| problems.push(ConfigProblem::new(k, p));
        let method = method(&raw.kind.method).map_err(|p| at("method", p)).ok();
        let path = PathTemplate::parse(&raw.kind.path).map_err(|p| at("path", p)).ok();
        let query = raw
            .kind
            .query
            .iter()
            .map(|(name, v)| Ok(QueryParam::new(name, Template::parse(&literal(v)?)?)))
            .collect::<Result<Vec<_>, String>>()
            .map_err(|p| at("query", p))
            .ok();
        let headers = raw
            .kind
            .headers
            .iter()
            .map(|(name, v)| Ok((check_header_name(name, credential)?, Template::parse(&literal(v)?)?)))
            .collect::<Result<Vec<_>, String>>()
            .map_err(|p| at("headers", p))
            .ok();
        let body = match (&raw.kind.body, &method) {
            (None, _) => Some(None),
            (Some(_), Some(m)) if matches!(*m, Method::GET | Method::HEAD | Method::OPTIONS) => {
                at("body", format!("a {m} request has no body"));
                None
            }
            (Some(BodyConfig::Whole(WholeBody::Arguments)), _) => {
                Some(Some(Body::Arguments(declared_only(&raw.input_schema))))
            }
            (Some(BodyConfig::Fields(map)), _) => BodyNode::compile(&Value::Object(map.clone()))
                .map(|node| Some(Body::Fields(node)))
                .map_err(|p| at("body", p))
                .ok(),
        };
        let (Some(method), Some(path), Some(query), Some(headers), Some(body)) = (method, path, query, headers, body)
        else {
            return Err(problems.under(key));
        };
        let templates = Templates { path, query, headers, body };
        if let Err((k, p)) = templates.check_arguments(&raw.input_schema) {
            problems.add(k, p);
        }
        let idempotent = raw.kind.idempotent.unwrap_or_else(|| idempotent(&method));
        problems
            .finish(|| {
                let shape = Shape::Templates(Box::new(templates));
                (Self { method, idempotent, shape, server: None, pool: 0 }, raw.spec())
            })
            .map_err(|p| p.under(key))
    }

    /// A plan for a request described parameter by parameter (a generated tool). `method`
    /// is an HTTP method name; retries follow its idempotency.
    pub fn operation(method_name: &str, operation: Operation) -> Result<Self, String> {
        let method = method(method_name)?;
        let shape = Shape::Operation(Box::new(operation));
        Ok(Self { idempotent: idempotent(&method), method, shape, server: None, pool: 0 })
    }

    /// The plan sent to `base_url` instead of the adapter's `base_urls` (an OpenAPI
    /// operation's or path item's own `servers`). The URL is checked like a `base_urls`
    /// entry when the adapter is built; its upstream has the adapter's ejection rules, not
    /// its health check (whose path belongs to `base_urls`).
    #[must_use]
    pub fn on_server(mut self, base_url: String) -> Self {
        self.server = Some(base_url);
        self
    }

    /// The base URL of the plan's own, if any.
    pub fn server(&self) -> Option<&str> {
        self.server.as_deref()
    }

    /// Builds the request for validated `args`. Fails with [`AdapterError::InvalidArguments`]
    /// naming the argument when a value cannot be placed safely.
    pub fn prepare(&self, args: &Map<String, Value>) -> Result<Prepared, AdapterError> {
        match &self.shape {
            Shape::Templates(t) => t.prepare(args),
            Shape::Operation(op) => {
                let (path_and_query, headers, body) = op.prepare(args)?;
                Ok(Prepared { path_and_query, headers, body })
            }
        }
    }
}

/// An HTTP method the adapter sends.
fn method(name: &str) -> Result<Method, String> {
    Ok(match name.to_ascii_uppercase().as_str() {
        "GET" => Method::GET,
        "HEAD" => Method::HEAD,
        "POST" => Method::POST,
        "PUT" => Method::PUT,
        "PATCH" => Method::PATCH,
        "DELETE" => Method::DELETE,
        "OPTIONS" => Method::OPTIONS,
        other => return Err(format!("'{other}' is not one of GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS")),
    })
}

/// Whether sending the method twice has the effect of sending it once (RFC 9110 § 9.2.2).
fn idempotent(method: &Method) -> bool {
    matches!(*method, Method::GET | Method::HEAD | Method::PUT | Method::DELETE | Method::OPTIONS)
}

impl Templates {
    /// Every placeholder names a property of the input schema, and path placeholders are
    /// required properties (a path cannot leave a segment out).
    fn check_arguments(&self, schema: &Value) -> Result<(), (&'static str, String)> {
        let props = schema.get("properties").and_then(Value::as_object);
        let required: Vec<&str> =
            schema.get("required").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str).collect();
        let known = |v: &str| props.is_some_and(|p| p.contains_key(v));
        for v in self.path.vars() {
            if !known(v) || !required.contains(&v) {
                return Err(("path", format!("{{{v}}} must be a required property of input_schema")));
            }
        }
        let mut used: Vec<(&'static str, String)> = Vec::new();
        used.extend(self.query.iter().flat_map(QueryParam::vars).map(|v| ("query", v.to_owned())));
        used.extend(self.headers.iter().flat_map(|(_, t)| t.vars()).map(|v| ("headers", v.to_owned())));
        if let Some(Body::Fields(node)) = &self.body {
            let mut vars = Vec::new();
            node.vars(&mut vars);
            used.extend(vars.into_iter().map(|v| ("body", v)));
        }
        match used.into_iter().find(|(_, v)| !known(v)) {
            Some((k, v)) => Err((k, format!("{{{v}}} is not a property of input_schema"))),
            None => Ok(()),
        }
    }

    fn prepare(&self, args: &Map<String, Value>) -> Result<Prepared, AdapterError> {
        let mut path_and_query = String::with_capacity(64);
        self.path.render(args, &mut path_and_query)?;
        for q in &self.query {
            q.render(args, &mut path_and_query)?;
        }
        let mut headers = HeaderMap::with_capacity(self.headers.len() + 1);
        for (name, template) in &self.headers {
            if let Some(text) = template.render_text(args)? {
                // HeaderValue refuses CR, LF and other control bytes: no header injection.
                let value = HeaderValue::from_str(&text).map_err(|_| {
                    let field = template.vars().next().unwrap_or(name.as_str()).to_owned();
                    AdapterError::invalid_argument(field, format!("cannot be sent in the {name} header"))
                })?;
                headers.insert(name.clone(), value);
            }
        }
        let body = match &self.body {
            None => None,
            Some(Body::Arguments(declared)) => {
                if let Some(declared) = declared
                    && let Some(extra) = args.keys().find(|k| !declared.contains(k))
                {
                    return Err(AdapterError::invalid_argument(
                        extra.as_str(),
                        "is not a property of this tool's input_schema, and undeclared properties are not sent \
                         upstream (the tool's schema can allow them with additionalProperties)",
                    ));
                }
                Some(serde_json::to_vec(args))
            }
            Some(Body::Fields(node)) => node.render(args)?.map(|v| serde_json::to_vec(&v)),
        };
        let body = body.transpose().map_err(|e| AdapterError::Internal(format!("JSON body: {e}")))?.map(Bytes::from);
        if body.is_some() && !headers.contains_key(CONTENT_TYPE) {
            headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        }
        Ok(Prepared { path_and_query, headers, body })
    }
}

/// Query and header values may be written as TOML numbers or booleans; templates are text.
fn literal(v: &Value) -> Result<String, String> {
    match v {
        Value::String(s) => Ok(s.clone()),
        Value::Number(n) => Ok(n.to_string()),
        Value::Bool(b) => Ok(b.to_string()),
        other => Err(format!("{other} is not a string, number or boolean")),
    }
}

#[cfg(test)]
mod tests;
