//! `{name}` templates for paths, query parameters, headers and body fields, and the encoding
//! rules that keep argument values inert: a path value is exactly one percent-encoded segment
//! (so `/`, `?`, `#` and `..` cannot change the path, and nothing can change the host).

use std::borrow::Cow;

use mcp_adapter_api::AdapterError;
use mcp_adapter_api::template::{Part, Template as Parsed};
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};
use serde_json::{Map, Value};

/// Everything but RFC 3986 unreserved characters gets encoded: the strictest choice, valid in
/// a path segment, a query name and a query value alike.
pub const COMPONENT: &AsciiSet = &NON_ALPHANUMERIC.remove(b'-').remove(b'.').remove(b'_').remove(b'~');

/// A parsed template: `"/users/{login}/repos"`, `"{query}"`, `"Bearer {x}"`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Template(Parsed);

impl Template {
    /// Parses `{name}` placeholders with the contract's grammar
    /// ([`mcp_adapter_api::template`]: names of letters, digits, `_`, `-`; `{{` and `}}` are
    /// literal braces; a stray `{` or `}` is refused rather than guessed at).
    pub fn parse(text: &str) -> Result<Self, String> {
        Parsed::parse(text).map(Self).map_err(|e| e.to_string())
    }

    /// The argument names used.
    pub fn vars(&self) -> impl Iterator<Item = &str> {
        self.0.vars()
    }

    /// The argument name when the template is exactly `{name}`.
    pub fn single_var(&self) -> Option<&str> {
        self.0.single_var()
    }

    /// Literal text parts.
    fn literals(&self) -> impl Iterator<Item = &str> {
        self.0.parts().iter().filter_map(|p| match p {
            Part::Lit(l) => Some(l.as_str()),
            Part::Var(_) => None,
        })
    }

    /// Renders into `out`, passing each argument value through `value`. `Ok(false)` (and `out`
    /// unspecified) when an argument is absent or null: the caller omits the part.
    fn render_with(
        &self,
        args: &Map<String, Value>,
        out: &mut String,
        mut value: impl FnMut(&str, &str, &mut String) -> Result<(), AdapterError>,
    ) -> Result<bool, AdapterError> {
        for part in self.0.parts() {
            match part {
                Part::Lit(l) => out.push_str(l),
                Part::Var(name) => match arg(args, name) {
                    None => return Ok(false),
                    Some(v) => value(name, &scalar(name, v)?, out)?,
                },
            }
        }
        Ok(true)
    }

    /// Renders as plain text (header values, body strings); `None` when an argument is absent.
    pub fn render_text(&self, args: &Map<String, Value>) -> Result<Option<String>, AdapterError> {
        let mut out = String::new();
        let present = self.render_with(args, &mut out, |_, v, out| {
            out.push_str(v);
            Ok(())
        })?;
        Ok(present.then_some(out))
    }
}

/// A present, non-null argument.
pub fn arg<'a>(args: &'a Map<String, Value>, name: &str) -> Option<&'a Value> {
    args.get(name).filter(|v| !v.is_null())
}

/// The text of a scalar argument; arrays and objects have no single textual form.
pub fn scalar<'a>(name: &str, v: &'a Value) -> Result<Cow<'a, str>, AdapterError> {
    match v {
        Value::String(s) => Ok(Cow::Borrowed(s)),
        Value::Number(n) => Ok(Cow::Owned(n.to_string())),
        Value::Bool(b) => Ok(Cow::Borrowed(if *b { "true" } else { "false" })),
        Value::Null | Value::Array(_) | Value::Object(_) => {
            Err(AdapterError::invalid_argument(name, "must be a string, number or boolean here"))
        }
    }
}

/// A path template: starts with `/`; its literal text is a valid path (checked at load);
/// each argument becomes one encoded segment part.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathTemplate(Template);

impl PathTemplate {
    /// Parses and checks the literal text: it comes from config, but a typo such as a space,
    /// a `?` (use `query`) or a `..` segment is better refused at load than sent.
    pub fn parse(text: &str) -> Result<Self, String> {
        if !text.starts_with('/') {
            return Err(format!("'{text}' must start with '/'"));
        }
        let t = Template::parse(text)?;
        for lit in t.literals() {
            if let Some(c) = lit.chars().find(|c| !is_path_char(*c)) {
                return Err(format!("'{c}' is not allowed in a path (query parameters go in `query`)"));
            }
        }
        // Dot segments made only of literal text; argument values are checked per call.
        let probe: String = t.0.parts().iter().map(|p| if let Part::Lit(l) = p { l.as_str() } else { "x" }).collect();
        if probe.split('/').any(|seg| seg == "." || seg == ".." || seg.eq_ignore_ascii_case("%2e")) {
            return Err(format!("'{text}' contains a '.' or '..' segment"));
        }
        Ok(Self(t))
    }

    /// The argument names used.
    pub fn vars(&self) -> impl Iterator<Item = &str> {
        self.0.vars()
    }

    /// Appends the rendered path to `out`. Values are refused when empty, `.` or `..` (they
    /// would drop or climb a segment); everything else is percent-encoded, `/` included.
    pub fn render(&self, args: &Map<String, Value>, out: &mut String) -> Result<(), AdapterError> {
        let present = self.0.render_with(args, out, |name, v, out| {
            if v.is_empty() || v == "." || v == ".." {
                return Err(AdapterError::invalid_argument(
                    name,
                    format!("'{v}' is not allowed as a path value (empty, '.' and '..' would change the path)"),
                ));
            }
            out.extend(utf8_percent_encode(v, COMPONENT));
            Ok(())
        })?;
        match present {
            true => Ok(()),
            // The schema check makes path arguments required (load-time rule); defend anyway.
            false => Err(AdapterError::invalid_argument(
                self.0.vars().find(|v| arg(args, v).is_none()).unwrap_or("path"),
                "is required: it is part of the request path",
            )),
        }
    }
}

/// RFC 3986 `pchar` plus `/` (and `%` for pre-encoded literal text).
fn is_path_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || "-._~!$&'()*+,;=:@/%".contains(c)
}

/// One query parameter: a literal name and a value template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueryParam {
    name: String,
    value: Template,
}

impl QueryParam {
    /// `name = template`.
    pub fn new(name: &str, value: Template) -> Self {
        Self { name: name.to_owned(), value }
    }

    /// The argument names used.
    pub fn vars(&self) -> impl Iterator<Item = &str> {
        self.value.vars()
    }

    /// Appends `name=value` pairs (with `&` separators after the first pair of the query) to
    /// `out`. Absent arguments omit the pair; an array argument as the whole value repeats it.
    pub fn render(&self, args: &Map<String, Value>, out: &mut String) -> Result<(), AdapterError> {
        let pair = |value: &str, out: &mut String| {
            // A rendered path never holds a '?' (refused in literals, encoded in values).
            out.push(if out.contains('?') { '&' } else { '?' });
            out.extend(utf8_percent_encode(&self.name, COMPONENT));
            out.push('=');
            out.extend(utf8_percent_encode(value, COMPONENT));
        };
        if let Some(name) = self.value.single_var()
            && let Some(Value::Array(items)) = arg(args, name)
        {
            for item in items.iter().filter(|v| !v.is_null()) {
                pair(&scalar(name, item)?, out);
            }
            return Ok(());
        }
        if let Some(v) = self.value.render_text(args)? {
            pair(&v, out);
        }
        Ok(())
    }
}

/// A JSON body built from a mapping.
#[derive(Debug, Clone, PartialEq)]
pub enum BodyNode {
    /// `"{name}"`: the argument with its JSON type; the field is omitted when absent.
    Arg(String),
    /// A string with placeholders; omitted when an argument is absent.
    Text(Template),
    /// A constant.
    Literal(Value),
    /// A nested table.
    Object(Vec<(String, BodyNode)>),
}

impl BodyNode {
    /// Compiles a config value.
    pub fn compile(v: &Value) -> Result<Self, String> {
        Ok(match v {
            Value::String(s) => {
                let t = Template::parse(s)?;
                match (t.single_var(), t.0.as_literal()) {
                    (Some(name), _) => Self::Arg(name.to_owned()),
                    // `{{` / `}}` unescaped.
                    (None, Some(text)) => Self::Literal(Value::String(text.to_owned())),
                    (None, None) => Self::Text(t),
                }
            }
            Value::Object(map) => Self::Object(
                map.iter().map(|(k, v)| Ok((k.clone(), Self::compile(v)?))).collect::<Result<_, String>>()?,
            ),
            other => Self::Literal(other.clone()),
        })
    }

    /// The argument names used.
    pub fn vars(&self, out: &mut Vec<String>) {
        match self {
            Self::Arg(a) => out.push(a.clone()),
            Self::Text(t) => out.extend(t.vars().map(str::to_owned)),
            Self::Literal(_) => {}
            Self::Object(fields) => fields.iter().for_each(|(_, n)| n.vars(out)),
        }
    }

    /// The value, or `None` when it depends on an absent argument.
    pub fn render(&self, args: &Map<String, Value>) -> Result<Option<Value>, AdapterError> {
        Ok(match self {
            Self::Arg(name) => arg(args, name).cloned(),
            Self::Text(t) => t.render_text(args)?.map(Value::String),
            Self::Literal(v) => Some(v.clone()),
            Self::Object(fields) => {
                let mut map = Map::new();
                for (k, node) in fields {
                    if let Some(v) = node.render(args)? {
                        map.insert(k.clone(), v);
                    }
                }
                Some(Value::Object(map))
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn args(v: Value) -> Map<String, Value> {
        let Value::Object(map) = v else { panic!("an object") };
        map
    }

    fn path(t: &str, a: Value) -> Result<String, AdapterError> {
        let mut out = String::new();
        PathTemplate::parse(t).unwrap().render(&args(a), &mut out).map(|()| out)
    }

    #[test]
    fn parses_placeholders_and_refuses_stray_braces() {
        let t = Template::parse("a{b}c{d_1}").unwrap();
        assert_eq!(t.vars().collect::<Vec<_>>(), ["b", "d_1"]);
        assert_eq!(Template::parse("{x}").unwrap().single_var(), Some("x"));
        for bad in ["{", "}", "{}", "{a b}", "a}b{c}", "{a{b}}"] {
            assert!(Template::parse(bad).is_err(), "{bad}");
        }
        let e = Template::parse("/u/{id").unwrap_err();
        assert_eq!(e, "unclosed '{' at character 4 of '/u/{id' (write {{ for a literal brace)");
        assert_eq!(Template::parse("{{x}}").unwrap().0.as_literal(), Some("{x}"));
    }

    #[test]
    fn a_path_value_is_exactly_one_encoded_segment() {
        assert_eq!(path("/users/{id}/repos", json!({"id": "octo cat"})).unwrap(), "/users/octo%20cat/repos");
        assert_eq!(path("/u/{id}", json!({"id": "a/b"})).unwrap(), "/u/a%2Fb");
        assert_eq!(path("/u/{id}", json!({"id": "../admin"})).unwrap(), "/u/..%2Fadmin");
        assert_eq!(path("/u/{id}", json!({"id": "%2e%2e"})).unwrap(), "/u/%252e%252e");
        assert_eq!(path("/u/{id}", json!({"id": "x?y#z"})).unwrap(), "/u/x%3Fy%23z");
        assert_eq!(path("/u/{id}", json!({"id": "@evil.com"})).unwrap(), "/u/%40evil.com");
        assert_eq!(path("/u/{id}.json", json!({"id": 42})).unwrap(), "/u/42.json");
        assert_eq!(path("/u/{id}", json!({"id": "ü"})).unwrap(), "/u/%C3%BC");
        for bad in ["..", ".", ""] {
            let e = path("/u/{id}", json!({"id": bad})).unwrap_err();
            assert!(matches!(e, AdapterError::InvalidArguments { field: Some(ref f), .. } if f == "id"), "{bad}");
        }
        assert!(path("/u/{id}", json!({"id": ["a"]})).is_err());
        assert!(path("/u/{id}", json!({})).is_err());
    }

    #[test]
    fn path_templates_are_checked_at_load() {
        for bad in ["users/{id}", "/a b", "/x?y={y}", "/a/../b", "/a/./b", "/a/%2E/b", "/#x"] {
            assert!(PathTemplate::parse(bad).is_err(), "{bad}");
        }
        assert!(PathTemplate::parse("/v1/{a}.{b}/x:y@z").is_ok());
    }

    #[test]
    fn query_parts_are_encoded_omitted_or_repeated() {
        let params = [
            QueryParam::new("q", Template::parse("{q}").unwrap()),
            QueryParam::new("page", Template::parse("{page}").unwrap()),
            QueryParam::new("id", Template::parse("{ids}").unwrap()),
            QueryParam::new("fixed", Template::parse("a b").unwrap()),
        ];
        let render = |a: Value| {
            let mut out = "/x".to_owned();
            for p in &params {
                p.render(&args(a.clone()), &mut out).unwrap();
            }
            out
        };
        assert_eq!(render(json!({"q": "a&b=c"})), "/x?q=a%26b%3Dc&fixed=a%20b");
        assert_eq!(render(json!({"page": 2, "ids": [1, "x"]})), "/x?page=2&id=1&id=x&fixed=a%20b");
        assert_eq!(render(json!({"q": null})), "/x?fixed=a%20b");
    }

    #[test]
    fn body_fields_keep_types_and_skip_absent_arguments() {
        let node =
            BodyNode::compile(&json!({"n": "{n}", "s": "hi {who}", "k": 1, "nested": {"m": "{m}"}, "b": "{{}}"}))
                .unwrap();
        let v = node.render(&args(json!({"n": 5, "who": "bob"}))).unwrap().unwrap();
        assert_eq!(v, json!({"n": 5, "s": "hi bob", "k": 1, "nested": {}, "b": "{}"}));
        let mut vars = Vec::new();
        node.vars(&mut vars);
        vars.sort();
        assert_eq!(vars, ["m", "n", "who"]);
    }
}
