//! A configuration made of several files: `--config` given more than once, or naming a folder
//! (`conf.d/`: its `*.toml`, `*.yaml`/`*.yml` and `*.json` in name order). Each file is parsed
//! by a parser that keeps the span of every key and value; the `config` crate merges them key
//! by key (a later file overrides an earlier one) with the `MCP_RUNTIME__*` environment last,
//! every value keeping its origin (the file and span it came from), so a problem found after
//! the merge is still shown at its place in its own file. Lists of tables (`[[adapters]]`,
//! `[[request_state.keys]]`, `[[auth.tokens]]`, ...) concatenate in file order instead of
//! replacing each other; an entry named twice across files is a problem naming both.
//!
//! Spans are offsets into the set's texts laid end to end (each file starts at its `base`), so
//! one tree can hold values of several files and a report still finds each one's file.

use std::ops::Range;
use std::path::{Path, PathBuf};

use saphyr::{LoadableYamlNode, MarkedYaml, Scalar, YamlData};
use toml::Spanned;
use toml::de::{DeTable, DeValue};

use super::report::Problem;

/// How a file is written, by its extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// `.toml` (and anything else: the historical default).
    Toml,
    /// `.yaml`, `.yml`.
    Yaml,
    /// `.json`.
    Json,
}

impl Format {
    /// The format of `path`.
    pub fn of(path: &Path) -> Self {
        match path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase).as_deref() {
            Some("yaml" | "yml") => Self::Yaml,
            Some("json") => Self::Json,
            _ => Self::Toml,
        }
    }
}

/// One file of a set.
#[derive(Debug, Clone)]
pub struct Layer {
    /// The file as named (for reports).
    pub name: String,
    /// Its text.
    pub text: String,
    /// Where its text starts in the set's offsets.
    pub base: usize,
    /// Its format.
    pub format: Format,
    /// Its folder: relative paths written in it start there (`None`: not a file).
    pub dir: Option<PathBuf>,
}

impl Layer {
    /// Whether the set's offset `at` lies in this file.
    pub fn holds(&self, at: usize) -> bool {
        at >= self.base && at <= self.base + self.text.len()
    }
}

/// The files `paths` name, in order: a file as it is, a folder as its `*.toml`, `*.yaml`,
/// `*.yml` and `*.json` files in name order (hidden ones, such as Kubernetes' `..data`, left
/// out). A path that cannot be read is an error naming it.
pub fn expand(paths: &[PathBuf]) -> Result<Vec<PathBuf>, String> {
    let mut out = Vec::new();
    for path in paths {
        if !path.is_dir() {
            out.push(path.clone());
            continue;
        }
        let entries =
            std::fs::read_dir(path).map_err(|e| format!("{}: cannot read the folder: {e}", path.display()))?;
        let mut files: Vec<PathBuf> = entries
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| {
                let name = p.file_name().and_then(|n| n.to_str()).unwrap_or(".");
                let ext = p.extension().and_then(|e| e.to_str()).unwrap_or_default();
                !name.starts_with('.') && matches!(ext, "toml" | "yaml" | "yml" | "json") && p.is_file()
            })
            .collect();
        if files.is_empty() {
            return Err(format!("{}: the folder holds no *.toml, *.yaml, *.yml or *.json file", path.display()));
        }
        files.sort();
        out.extend(files);
    }
    Ok(out)
}

/// The layers of `files` (name, text), their bases laid out end to end.
pub fn layers(files: Vec<(String, String, Option<PathBuf>)>) -> Vec<Layer> {
    let mut base = 0;
    files
        .into_iter()
        .map(|(name, text, path)| {
            let layer = Layer {
                format: path.as_deref().map_or(Format::Toml, Format::of),
                dir: path.as_deref().and_then(Path::parent).map(Path::to_path_buf),
                name,
                base,
                text,
            };
            base += layer.text.len() + 1;
            layer
        })
        .collect()
}

/// One file's values for `config`, every one with its origin (`@key-span@value-span`, in the
/// set's offsets); or the file's syntax problems.
pub fn parse(layer: &Layer) -> Result<config::Map<String, config::Value>, Vec<Problem>> {
    let syntax = |message: String, span: Option<Range<usize>>| Problem {
        path: String::new(),
        message,
        span: span.map(|s| s.start + layer.base..s.end + layer.base),
        env: None,
        help: None,
    };
    match layer.format {
        Format::Toml => {
            let (root, errors) = DeTable::parse_recoverable(&layer.text);
            if !errors.is_empty() {
                return Err(errors.iter().map(|e| syntax(e.message().trim().replace('\n', "; "), e.span())).collect());
            }
            Ok(toml_table(root.get_ref(), layer.base))
        }
        Format::Json | Format::Yaml => {
            if layer.format == Format::Json
                && let Err(e) = serde_json::from_str::<serde::de::IgnoredAny>(&layer.text)
            {
                let at = offset_of(&layer.text, e.line(), e.column().saturating_sub(1));
                return Err(vec![syntax(strip_position(&e.to_string()), Some(at..at + 1))]);
            }
            let chars: Vec<usize> = layer.text.char_indices().map(|(b, _)| b).chain([layer.text.len()]).collect();
            let byte = |char_index: usize| chars.get(char_index).copied().unwrap_or(layer.text.len()) + layer.base;
            let docs = MarkedYaml::load_from_str(&layer.text).map_err(|e| {
                let at = chars.get(e.marker().index()).copied().unwrap_or(layer.text.len());
                vec![syntax(e.info().to_owned(), Some(at..at + 1))]
            })?;
            let Some(doc) = docs.into_iter().next() else { return Ok(config::Map::new()) };
            match yaml_value(&doc, 0..0, &byte) {
                Ok(config::Value { kind: config::ValueKind::Table(t), .. }) => Ok(t),
                Ok(_) => Err(vec![syntax("the document must be a mapping of sections".to_owned(), Some(0..1))]),
                Err(p) => Err(vec![p]),
            }
        }
    }
}

/// `@key-start-key-end@value-start-value-end`: a value's origin as `config` carries it.
pub fn origin(key: Range<usize>, value: Range<usize>) -> String {
    format!("@{}-{}@{}-{}", key.start, key.end, value.start, value.end)
}

/// The key and value spans an origin holds (`None` for the environment's values).
pub fn spans(origin: Option<&str>) -> Option<(Range<usize>, Range<usize>)> {
    let mut parts = origin?.strip_prefix('@')?.split('@');
    let range = |s: &str| -> Option<Range<usize>> {
        let (a, b) = s.split_once('-')?;
        Some(a.parse().ok()?..b.parse().ok()?)
    };
    Some((range(parts.next()?)?, range(parts.next()?)?))
}

/// `(line, column)` (1-based line, 0-based column in characters) → byte offset.
fn offset_of(text: &str, line: usize, column: usize) -> usize {
    let start: usize = text.split_inclusive('\n').take(line.saturating_sub(1)).map(str::len).sum();
    let rest = &text[start.min(text.len())..];
    start + rest.char_indices().nth(column).map_or(rest.len(), |(b, _)| b)
}

/// serde_json's message without its ` at line L column C` (the report says where).
fn strip_position(message: &str) -> String {
    message.split(" at line ").next().unwrap_or(message).to_owned()
}

fn shifted(span: Range<usize>, base: usize) -> Range<usize> {
    span.start + base..span.end + base
}

fn toml_table(table: &DeTable<'_>, base: usize) -> config::Map<String, config::Value> {
    table.iter().map(|(k, v)| (k.get_ref().to_string(), toml_value(shifted(k.span(), base), v, base))).collect()
}

fn toml_value(key: Range<usize>, value: &Spanned<DeValue<'_>>, base: usize) -> config::Value {
    use config::ValueKind as K;
    let kind = match value.get_ref() {
        DeValue::String(s) => K::String(s.to_string()),
        DeValue::Integer(i) => {
            i64::from_str_radix(i.as_str(), i.radix()).map_or_else(|_| K::String(i.to_string()), K::I64)
        }
        DeValue::Float(f) => f.as_str().parse::<f64>().map_or_else(|_| K::String(f.as_str().to_owned()), K::Float),
        DeValue::Boolean(b) => K::Boolean(*b),
        DeValue::Datetime(d) => K::String(d.to_string()),
        DeValue::Array(items) => K::Array(items.iter().map(|i| toml_value(0..0, i, base)).collect()),
        DeValue::Table(t) => K::Table(toml_table(t, base)),
    };
    config::Value::new(Some(&origin(key, shifted(value.span(), base))), kind)
}

/// A YAML node for `config` (`byte` turns the parser's character index into the set's
/// offset). Keys are strings; a key without a value is left unset (TOML has no null); an
/// alias and a tag are refused, as TOML has neither.
fn yaml_value(
    node: &MarkedYaml<'_>,
    key: Range<usize>,
    byte: &dyn Fn(usize) -> usize,
) -> Result<config::Value, Problem> {
    use config::ValueKind as K;
    let start = byte(node.span.start.index());
    let span = start..byte(node.span.end.index()).max(start + 1);
    let refuse = |message: &str| Problem {
        path: String::new(),
        message: message.to_owned(),
        span: Some(span.clone()),
        env: None,
        help: None,
    };
    let kind = match &node.data {
        YamlData::Value(Scalar::Null) => return Err(refuse("null is not a value here: leave the key out")),
        YamlData::Value(Scalar::Boolean(b)) => K::Boolean(*b),
        YamlData::Value(Scalar::Integer(i)) => K::I64(*i),
        YamlData::Value(Scalar::FloatingPoint(f)) => K::Float(f.into_inner()),
        YamlData::Value(Scalar::String(s)) | YamlData::Representation(s, _, _) => K::String(s.to_string()),
        YamlData::Sequence(items) => {
            K::Array(items.iter().map(|i| yaml_value(i, 0..0, byte)).collect::<Result<_, _>>()?)
        }
        YamlData::Mapping(map) => {
            let mut out = config::Map::new();
            for (k, v) in map {
                if matches!(v.data, YamlData::Value(Scalar::Null)) {
                    continue;
                }
                let name = match &k.data {
                    YamlData::Value(Scalar::String(s)) | YamlData::Representation(s, _, _) => s.to_string(),
                    YamlData::Value(Scalar::Integer(i)) => i.to_string(),
                    YamlData::Value(Scalar::Boolean(b)) => b.to_string(),
                    _ => return Err(refuse("a key must be a string")),
                };
                let key_span = byte(k.span.start.index())..byte(k.span.end.index());
                out.insert(name, yaml_value(v, key_span, byte)?);
            }
            K::Table(out)
        }
        YamlData::Alias(_) => return Err(refuse("anchors and aliases are not supported: write the value out")),
        YamlData::Tagged(_, _) => return Err(refuse("tags are not supported: write the plain value")),
        YamlData::BadValue => return Err(refuse("not a value")),
    };
    Ok(config::Value::new(Some(&origin(key, span)), kind))
}
