//! The argv template: how typed arguments become argv entries, never through a shell.
//!
//! ```text
//! element := "text with {arg} placeholders"     exactly one argv entry (the contract's grammar,
//!                                                   mcp_adapter_api::template: {{ and }} are literal braces)
//!          | { if = "arg", then = [element...] }    the elements when arg is present, not null, not false
//!          | { each = "arg", then = [element...] }  the elements once per item of the array arg;
//!                                                   inside, {arg} is the current item
//! ```
//!
//! Checked at load against the input schema: every placeholder names a property; a
//! placeholder outside an `if`/`each` of its own argument must be `required`; arrays and
//! objects only appear through `each`. At call time a value that would start an entry with
//! `-` is refused unless a literal `--` came before it or the tool allows it for that
//! argument, and NUL bytes are refused (they cannot be part of an argv entry).

use std::collections::BTreeSet;

use mcp_adapter_api::AdapterError;
use mcp_adapter_api::template::{Part as Piece, Template as Text};
use serde_json::{Map, Value};

/// A parsed template.
#[derive(Debug, Clone, PartialEq)]
pub struct Template {
    elements: Vec<Element>,
}

#[derive(Debug, Clone, PartialEq)]
enum Element {
    Text(Vec<Piece>),
    If { arg: String, then: Vec<Element> },
    Each { arg: String, then: Vec<Element> },
}

/// A template problem: where (`args[2].then[0]`) and what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TemplateError {
    /// Path below the tool, e.g. `args[2].then[0]`.
    pub path: String,
    /// What is wrong.
    pub problem: String,
}

/// What the schema says about the arguments, for the load-time checks.
struct Schema<'a> {
    properties: Option<&'a Map<String, Value>>,
    required: BTreeSet<&'a str>,
}

impl<'a> Schema<'a> {
    fn new(schema: &'a Value) -> Self {
        let required = schema
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        Self { properties: schema.get("properties").and_then(Value::as_object), required }
    }

    fn property(&self, name: &str) -> Option<&'a Value> {
        self.properties.and_then(|p| p.get(name))
    }

    /// The property's `type` when it is a single string.
    fn type_of(&self, name: &str) -> Option<&'a str> {
        self.property(name).and_then(|p| p.get("type")).and_then(Value::as_str)
    }
}

/// `'{what}' names no property of input_schema` (whose `properties` are given), and the
/// property meant: the nearest name (`did you mean 'count'?`) or the ones there are.
pub fn no_property(what: &str, name: &str, properties: Option<&Map<String, Value>>) -> String {
    let names: Vec<&str> = properties.map(|p| p.keys().map(String::as_str).collect()).unwrap_or_default();
    let hint = match mcp_adapter_api::closest(name, names.iter().copied()) {
        Some(near) => format!("did you mean '{near}'?"),
        None if names.is_empty() => "it has no properties".to_owned(),
        None => format!("its properties are {}", names.iter().map(|n| format!("'{n}'")).collect::<Vec<_>>().join(", ")),
    };
    format!("'{what}' names no property of input_schema; {hint}")
}

/// Names in scope while parsing a group.
#[derive(Clone, Default)]
struct Scope {
    /// Guarded by an enclosing `if` (present whenever the group renders).
    guarded: BTreeSet<String>,
    /// Bound to the current item by an enclosing `each`.
    items: BTreeSet<String>,
}

impl Template {
    /// Parses the `args` array and checks it against the tool's input schema.
    pub fn parse(args: &[Value], input_schema: &Value) -> Result<Self, TemplateError> {
        let schema = Schema::new(input_schema);
        let elements = parse_list(args, "args", &schema, &Scope::default())?;
        Ok(Self { elements })
    }

    /// Every argument name the template refers to.
    pub fn arguments(&self) -> BTreeSet<&str> {
        fn walk<'a>(elements: &'a [Element], out: &mut BTreeSet<&'a str>) {
            for e in elements {
                match e {
                    Element::Text(pieces) => out.extend(pieces.iter().filter_map(|p| match p {
                        Piece::Var(v) => Some(v.as_str()),
                        Piece::Lit(_) => None,
                    })),
                    Element::If { arg, then } | Element::Each { arg, then } => {
                        out.insert(arg);
                        walk(then, out);
                    }
                }
            }
        }
        let mut out = BTreeSet::new();
        walk(&self.elements, &mut out);
        out
    }

    /// Checks, at load, that each placeholder of a path argument (`is_path`) ends its entry
    /// after literal text only (`"{dir}"`, `"--file={file}"`): the program gets the opened
    /// object's name in its place, which text after it would reach beyond (`{dir}/x` would
    /// follow whatever `x` is, outside the check).
    pub fn check_paths(&self, is_path: &dyn Fn(&str) -> bool) -> Result<(), TemplateError> {
        fn walk(elements: &[Element], path: &str, is_path: &dyn Fn(&str) -> bool) -> Result<(), TemplateError> {
            for (i, e) in elements.iter().enumerate() {
                let here = format!("{path}[{i}]");
                match e {
                    Element::Text(pieces) => {
                        let last = pieces.len().saturating_sub(1);
                        let misplaced = pieces.iter().enumerate().find_map(|(j, p)| match p {
                            Piece::Var(v)
                                if is_path(v)
                                    && (j != last || pieces[..j].iter().any(|p| matches!(p, Piece::Var(_)))) =>
                            {
                                Some(v)
                            }
                            _ => None,
                        });
                        if let Some(v) = misplaced {
                            return Err(TemplateError {
                                path: here,
                                problem: format!(
                                    "'{{{v}}}' is a path argument: it must end its entry, after literal text only \
                                     (\"{{{v}}}\" or \"--option={{{v}}}\")"
                                ),
                            });
                        }
                    }
                    Element::If { then, .. } | Element::Each { then, .. } => {
                        walk(then, &format!("{here}.then"), is_path)?;
                    }
                }
            }
            Ok(())
        }
        walk(&self.elements, "args", is_path)
    }

    /// The argv entries (without the program) for `args`. `allow_dash` lists arguments whose
    /// values may start an entry with `-`.
    pub fn render(&self, args: &Map<String, Value>, allow_dash: &[String]) -> Result<Vec<String>, AdapterError> {
        self.render_paths(args, allow_dash, &|_| false).map(|(argv, _)| argv)
    }

    /// [`Template::render`], and where the values of path arguments (`is_path`) landed: they
    /// are left as given, for [`crate::confine`] to open and replace, and are exempt from the
    /// option rule (the program will see a descriptor's path, never the value).
    pub fn render_paths(
        &self,
        args: &Map<String, Value>,
        allow_dash: &[String],
        is_path: &dyn Fn(&str) -> bool,
    ) -> Result<(Vec<String>, Vec<PathSlot>), AdapterError> {
        let mut r = Renderer {
            args,
            allow_dash,
            is_path,
            out: Vec::new(),
            paths: Vec::new(),
            positional: false,
            items: Vec::new(),
        };
        r.list(&self.elements)?;
        Ok((r.out, r.paths))
    }
}

fn parse_list(values: &[Value], path: &str, schema: &Schema<'_>, scope: &Scope) -> Result<Vec<Element>, TemplateError> {
    values.iter().enumerate().map(|(i, v)| parse_element(v, &format!("{path}[{i}]"), schema, scope)).collect()
}

fn parse_element(value: &Value, path: &str, schema: &Schema<'_>, scope: &Scope) -> Result<Element, TemplateError> {
    let err = |problem: String| TemplateError { path: path.to_owned(), problem };
    match value {
        Value::String(text) => {
            let pieces = parse_text(text).map_err(err)?;
            for piece in &pieces {
                if let Piece::Var(name) = piece {
                    check_placeholder(name, schema, scope).map_err(err)?;
                }
            }
            Ok(Element::Text(pieces))
        }
        Value::Object(table) => {
            let (kind, arg) = match (table.get("if"), table.get("each")) {
                (Some(a), None) => ("if", a),
                (None, Some(a)) => ("each", a),
                _ => {
                    return Err(err(
                        "a group is { if = \"arg\", then = [...] } or { each = \"arg\", then = [...] }".into()
                    ));
                }
            };
            if let Some(extra) = table.keys().find(|k| !matches!(k.as_str(), "if" | "each" | "then")) {
                return Err(err(format!("unknown key '{extra}' in a group (keys: {kind}, then)")));
            }
            let arg = arg.as_str().ok_or_else(|| err(format!("'{kind}' names an argument: a string")))?.to_owned();
            if schema.property(&arg).is_none() {
                return Err(err(no_property(&format!("{kind} = \"{arg}\""), &arg, schema.properties)));
            }
            let then = match table.get("then") {
                Some(Value::Array(then)) if !then.is_empty() => then,
                _ => return Err(err("'then' must be a non-empty array of elements".into())),
            };
            let mut inner = scope.clone();
            if kind == "if" {
                inner.guarded.insert(arg.clone());
                let then = parse_list(then, &format!("{path}.then"), schema, &inner)?;
                Ok(Element::If { arg, then })
            } else {
                if schema.type_of(&arg).is_some_and(|t| t != "array") {
                    return Err(err(format!("'each = \"{arg}\"' needs an array property in input_schema")));
                }
                inner.items.insert(arg.clone());
                let then = parse_list(then, &format!("{path}.then"), schema, &inner)?;
                Ok(Element::Each { arg, then })
            }
        }
        _ => Err(err("an element is a string or an { if } / { each } table".into())),
    }
}

/// `--out={file}` → `[Lit("--out="), Var("file")]` (the contract's grammar), refusing NUL
/// bytes, which cannot be part of an argv entry.
fn parse_text(text: &str) -> Result<Vec<Piece>, String> {
    if text.contains('\0') {
        return Err("contains a NUL byte, which cannot be part of an argv entry".into());
    }
    Text::parse(text).map(Text::into_parts).map_err(|e| e.to_string())
}

fn check_placeholder(name: &str, schema: &Schema<'_>, scope: &Scope) -> Result<(), String> {
    if schema.property(name).is_none() {
        return Err(no_property(&format!("{{{name}}}"), name, schema.properties));
    }
    if scope.items.contains(name) {
        return Ok(());
    }
    match schema.type_of(name) {
        Some("array") => {
            return Err(format!(
                "'{{{name}}}' is an array: repeat it with {{ each = \"{name}\", then = [\"{{{name}}}\"] }}"
            ));
        }
        Some("object") => return Err(format!("'{{{name}}}' is an object, which cannot be one argv entry")),
        _ => {}
    }
    if !schema.required.contains(name) && !scope.guarded.contains(name) {
        return Err(format!(
            "'{{{name}}}' is optional in input_schema: wrap it in {{ if = \"{name}\", then = [...] }} or make it required"
        ));
    }
    Ok(())
}

/// Where a path argument's value sits in the rendered argv: `argv[entry][at..]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathSlot {
    /// Index of the argv entry.
    pub entry: usize,
    /// Byte offset of the value in it (after the literal text before it).
    pub at: usize,
    /// The argument.
    pub arg: String,
    /// The argument as callers see it in errors (`files.2` for an item).
    pub field: String,
}

struct Renderer<'a> {
    args: &'a Map<String, Value>,
    allow_dash: &'a [String],
    is_path: &'a dyn Fn(&str) -> bool,
    out: Vec<String>,
    paths: Vec<PathSlot>,
    /// A literal `--` was emitted: later entries are operands, never options.
    positional: bool,
    /// `each` bindings, innermost last: (argument, item, index).
    items: Vec<(&'a str, &'a Value, usize)>,
}

impl<'a> Renderer<'a> {
    fn list(&mut self, elements: &'a [Element]) -> Result<(), AdapterError> {
        elements.iter().try_for_each(|e| self.element(e))
    }

    /// The value of `name` (the current item inside its `each`); null counts as absent.
    fn lookup(&self, name: &str) -> Option<(&'a Value, String)> {
        if let Some((_, item, i)) = self.items.iter().rev().find(|(n, ..)| *n == name) {
            return Some((item, format!("{name}.{i}")));
        }
        self.args.get(name).filter(|v| !v.is_null()).map(|v| (v, name.to_owned()))
    }

    fn element(&mut self, element: &'a Element) -> Result<(), AdapterError> {
        match element {
            Element::Text(pieces) => {
                let mut entry = String::new();
                for piece in pieces {
                    match piece {
                        Piece::Lit(lit) => entry.push_str(lit),
                        Piece::Var(name) => {
                            let (value, field) = self.lookup(name).ok_or_else(|| {
                                AdapterError::invalid_argument(name, "is required by this tool's command line")
                            })?;
                            let text = scalar_text(value, &field)?;
                            if text.contains('\0') {
                                return Err(AdapterError::invalid_argument(
                                    field,
                                    "contains a NUL byte, which cannot be passed as a command-line argument",
                                ));
                            }
                            // One rule for everything a program may read as an instruction
                            // rather than an operand: `-x` / `--x` options (POSIX utility
                            // syntax guideline 4), and `+cmd` (vi/ex, vim, less and more run
                            // it as a command; POSIX `ex`/`more` "+command"). A literal `--`
                            // ends both (guideline 10).
                            if (self.is_path)(name) {
                                let at = entry.len();
                                self.paths.push(PathSlot { entry: self.out.len(), at, arg: name.clone(), field });
                                entry.push_str(&text);
                                continue;
                            }
                            if entry.is_empty()
                                && let Some(lead) = text.chars().next().filter(|c| matches!(c, '-' | '+'))
                                && !self.positional
                                && !self.allow_dash.iter().any(|a| a == name)
                            {
                                return Err(AdapterError::invalid_argument(
                                    field,
                                    format!(
                                        "starts with '{lead}', so the program could read it as an option or a command; \
                                         values may not start with '-' or '+' here"
                                    ),
                                ));
                            }
                            entry.push_str(&text);
                        }
                    }
                }
                if matches!(pieces.as_slice(), [Piece::Lit(l)] if l == "--") {
                    self.positional = true;
                }
                self.out.push(entry);
            }
            Element::If { arg, then } => {
                if self.lookup(arg).is_some_and(|(v, _)| *v != Value::Bool(false)) {
                    self.list(then)?;
                }
            }
            Element::Each { arg, then } => match self.lookup(arg) {
                None => {}
                Some((Value::Array(items), _)) => {
                    for (i, item) in items.iter().enumerate() {
                        self.items.push((arg, item, i));
                        let done = self.list(then);
                        self.items.pop();
                        done?;
                    }
                }
                Some((_, field)) => return Err(AdapterError::invalid_argument(field, "must be an array")),
            },
        }
        Ok(())
    }
}

/// Strings as they are, numbers as JSON writes them, booleans as `true` / `false`.
fn scalar_text(value: &Value, field: &str) -> Result<String, AdapterError> {
    match value {
        Value::String(s) => Ok(s.clone()),
        Value::Number(n) => Ok(n.to_string()),
        Value::Bool(b) => Ok(b.to_string()),
        Value::Null | Value::Array(_) | Value::Object(_) => {
            Err(AdapterError::invalid_argument(field, "must be a single string, number or boolean here"))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Value {
        json!({"type": "object", "required": ["pattern"], "properties": {
            "pattern": {"type": "string"}, "max": {"type": "integer"}, "ignore_case": {"type": "boolean"},
            "files": {"type": "array", "items": {"type": "string"}}, "opts": {"type": "object"},
        }})
    }

    fn template(args: &Value) -> Result<Template, TemplateError> {
        Template::parse(args.as_array().unwrap(), &schema())
    }

    fn render(t: &Template, args: &Value) -> Result<Vec<String>, AdapterError> {
        t.render(args.as_object().unwrap(), &[])
    }

    fn field(e: AdapterError) -> String {
        match e {
            AdapterError::InvalidArguments { field: Some(f), .. } => f,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn renders_literals_placeholders_groups_and_repeats() {
        let t = template(&json!([
            "--color=never",
            {"if": "ignore_case", "then": ["-i"]},
            {"if": "max", "then": ["--max-count={max}"]},
            "-e", "x{pattern}",
            "--",
            {"each": "files", "then": ["{files}"]},
            "{{literal}}",
        ]))
        .unwrap();
        let argv =
            render(&t, &json!({"pattern": "a b", "ignore_case": true, "max": 3, "files": ["f1", "-f2"]})).unwrap();
        assert_eq!(argv, ["--color=never", "-i", "--max-count=3", "-e", "xa b", "--", "f1", "-f2", "{literal}"]);
        let argv = render(&t, &json!({"pattern": "p", "ignore_case": false, "max": null})).unwrap();
        assert_eq!(argv, ["--color=never", "-e", "xp", "--", "{literal}"]);
        assert_eq!(t.arguments().into_iter().collect::<Vec<_>>(), ["files", "ignore_case", "max", "pattern"]);
    }

    #[test]
    fn hostile_values_stay_single_inert_entries() {
        let t = template(&json!(["{pattern}"])).unwrap();
        for v in ["; rm -rf /", "$(id)", "`id`", "a\nb", "*", "' \" \\", ""] {
            assert_eq!(render(&t, &json!({"pattern": v})).unwrap(), [v]);
        }
    }

    #[test]
    fn option_like_values_are_refused_before_dashdash_unless_allowed() {
        let t = template(&json!(["{pattern}"])).unwrap();
        let e = render(&t, &json!({"pattern": "--output=/etc/passwd"})).unwrap_err();
        assert_eq!(field(e), "pattern");
        assert!(t.render(json!({"pattern": "-v"}).as_object().unwrap(), &["pattern".into()]).is_ok());
        // Glued to a literal, the value cannot be an option of its own.
        let glued = template(&json!(["--regexp={pattern}"])).unwrap();
        assert_eq!(render(&glued, &json!({"pattern": "-x"})).unwrap(), ["--regexp=-x"]);
        // Items of an array are named with their index.
        let items = template(&json!([{"each": "files", "then": ["{files}"]}])).unwrap();
        assert_eq!(field(render(&items, &json!({"files": ["ok", "-rf"]})).unwrap_err()), "files.1");
        // `+cmd` is a command to vi, ex, vim, less and more: the same rule as `-`.
        for v in ["+!id", "+:!touch /tmp/x", "+"] {
            let e = render(&t, &json!({"pattern": v})).unwrap_err();
            assert_eq!(field(e), "pattern", "{v}");
        }
        assert!(t.render(json!({"pattern": "+x"}).as_object().unwrap(), &["pattern".into()]).is_ok());
        assert_eq!(render(&glued, &json!({"pattern": "+x"})).unwrap(), ["--regexp=+x"]);
        let after = template(&json!(["--", "{pattern}"])).unwrap();
        assert_eq!(render(&after, &json!({"pattern": "+x"})).unwrap(), ["--", "+x"]);
        assert_eq!(field(render(&items, &json!({"files": ["ok", "+q"]})).unwrap_err()), "files.1");
        // A NUL byte cannot be an argv entry.
        assert_eq!(field(render(&t, &json!({"pattern": "a\u{0}b"})).unwrap_err()), "pattern");
    }

    #[test]
    fn a_placeholder_naming_no_property_says_which_was_meant() {
        let schema = json!({"type": "object", "properties": {"count": {"type": "integer"}, "path": {"type": "string"}}, "required": ["count", "path"]});
        let e = Template::parse(json!(["-n", "{coutn}"]).as_array().unwrap(), &schema).unwrap_err();
        assert_eq!(e.problem, "'{coutn}' names no property of input_schema; did you mean 'count'?");
        let e = Template::parse(json!([{"if": "zzz", "then": ["x"]}]).as_array().unwrap(), &schema).unwrap_err();
        assert_eq!(e.problem, "'if = \"zzz\"' names no property of input_schema; its properties are 'count', 'path'");
        let e = Template::parse(json!(["{x}"]).as_array().unwrap(), &json!({"type": "object"})).unwrap_err();
        assert_eq!(e.problem, "'{x}' names no property of input_schema; it has no properties");
    }

    #[test]
    fn load_time_checks_name_the_element() {
        let bad = [
            (json!(["{nope}"]), "args[0]", "names no property"),
            (json!(["{max}"]), "args[0]", "optional"),
            (json!(["{files}"]), "args[0]", "each"),
            (json!(["{opts}"]), "args[0]", "object"),
            (json!(["{pattern"]), "args[0]", "unclosed"),
            (json!(["a}"]), "args[0]", "unmatched"),
            (json!(["{}"]), "args[0]", "empty"),
            (json!([{"if": "max", "then": []}]), "args[0]", "non-empty"),
            (json!(["x", {"if": "max", "then": ["{files}"]}]), "args[1].then[0]", "each"),
            (json!([{"each": "pattern", "then": ["{pattern}"]}]), "args[0]", "array"),
            (json!([{"if": "max", "each": "files", "then": ["x"]}]), "args[0]", "group"),
            (json!([{"if": "max", "then": ["x"], "else": ["y"]}]), "args[0]", "unknown key 'else'"),
            (json!([7]), "args[0]", "string"),
            (json!(["a\u{0}"]), "args[0]", "NUL"),
        ];
        for (args, path, problem) in bad {
            let e = template(&args).unwrap_err();
            assert_eq!(e.path, path, "{args}");
            assert!(e.problem.contains(problem), "{args}: {}", e.problem);
        }
    }
}
