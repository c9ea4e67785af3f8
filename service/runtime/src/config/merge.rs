//! The files of a set merged by the `config` crate, with the `MCP_RUNTIME__*` environment
//! last. Every value enters `config` with its spans as its origin and leaves with them, so the
//! merged configuration still says where each value was written, in whichever file.
//! `config` replaces lists; lists of tables are concatenated here first (file order), and an
//! entry named in two files is a problem naming both.
//!
//! The merged configuration is then written out as one TOML document (each section on one
//! line, inline tables) together with a map from each key's and value's place in that text to
//! its place in the files, so `toml`'s spanned parser and the reader built on it
//! (`super::source`) work on a set as on one file.

use std::collections::{BTreeMap, HashMap};
use std::ops::Range;
use std::path::Path;

use config::{Value, ValueKind};

use super::layers::{Layer, spans};
use super::report::Problem;

/// Keys whose environment value is a comma-separated list.
pub const LIST_KEYS: [&str; 2] = ["server.allowed_hosts", "server.allowed_origins"];

/// What identifies an entry of a list of tables, first found: `[[adapters]]` by `name` (else
/// its `kind`, the default name), keys by `id`, issuers by `issuer`.
const IDENTITY: [&str; 4] = ["name", "id", "issuer", "kind"];

/// A merged configuration as one TOML text, and where its keys and values were written:
/// an offset of `text` → the span in the set's files.
#[derive(Debug, Default)]
pub struct Merged {
    /// The TOML document.
    pub text: String,
    /// Start of a key or value in `text` → its span in the files.
    pub places: HashMap<usize, Range<usize>>,
}

impl Merged {
    /// The span in the files of what starts at `span.start` in the merged text.
    pub fn place(&self, span: Range<usize>) -> Option<Range<usize>> {
        self.places.get(&span.start).cloned()
    }
}

/// `files` (one map per layer, in order) and the overrides among `env` merged; the problems
/// of the merge (an entry named in two files).
pub fn merge(
    files: Vec<config::Map<String, Value>>,
    layers: &[Layer],
    env: &[(String, String)],
    prefix: &str,
) -> Result<(Merged, Vec<Problem>), String> {
    let mut lists: BTreeMap<Vec<String>, (Option<String>, Vec<Value>)> = BTreeMap::new();
    let mut builder = config::Config::builder();
    // Where each section is written (the last file to write it): `config` hands a section
    // back as its contents, without its own origin.
    let mut sections: HashMap<String, Option<String>> = HashMap::new();
    for (mut map, layer) in files.into_iter().zip(layers) {
        if let Some(dir) = &layer.dir {
            absolutize(&mut map, dir);
        }
        sections.extend(map.iter().map(|(k, v)| (k.clone(), v.origin().map(str::to_owned))));
        take_lists(&mut map, &mut Vec::new(), &mut lists);
        builder = builder.add_source(File(map));
    }
    let problems = duplicates(&lists, layers);
    let mut concatenated = config::Map::new();
    for (path, (origin, items)) in lists {
        // Located where the list is first written.
        insert_at(&mut concatenated, &path, Value::new(origin.as_ref(), ValueKind::Array(items)));
    }
    builder = builder.add_source(File(concatenated));
    let mut environment = config::Environment::with_prefix(prefix)
        .prefix_separator("__")
        .separator("__")
        .try_parsing(true)
        .list_separator(",")
        .source(Some(env.iter().cloned().collect()));
    for key in LIST_KEYS {
        environment = environment.with_list_parse_key(key);
    }
    let merged = builder.add_source(environment).build().map_err(|e| e.to_string())?;
    let keys: Vec<String> = merged
        .clone()
        .try_deserialize::<BTreeMap<String, serde::de::IgnoredAny>>()
        .map(|m| m.into_keys().collect())
        .unwrap_or_default();
    let mut out = Merged::default();
    for key in keys {
        let origin = sections.get(&key).cloned().flatten();
        let value = match (merged.get_table(&key), merged.get_array(&key)) {
            (Ok(table), _) => Value::new(origin.as_ref(), ValueKind::Table(table)),
            (_, Ok(array)) => Value::new(origin.as_ref(), ValueKind::Array(array)),
            _ => continue,
        };
        write_key(&key, spans(origin.as_deref()).map(|(k, _)| k), &mut out);
        out.text.push_str(" = ");
        write_value(&value, &mut out);
        out.text.push('\n');
    }
    Ok((out, problems))
}

/// Makes the relative paths of a file absolute against its folder: the values of `*_file`
/// keys, `[audit] file` and an OpenAPI `spec` that is not a URL. After the merge, a value no longer says which
/// file's folder it is relative to.
fn absolutize(map: &mut config::Map<String, Value>, dir: &Path) {
    for (key, value) in map.iter_mut() {
        let path_key = key.ends_with("_file") || key == "spec" || key == "file";
        match &mut value.kind {
            ValueKind::String(s) if path_key && !s.contains("://") && Path::new(s.as_str()).is_relative() => {
                *s = dir.join(s.as_str()).display().to_string();
            }
            ValueKind::Table(inner) => absolutize(inner, dir),
            ValueKind::Array(items) => {
                for item in items.iter_mut() {
                    if let ValueKind::Table(inner) = &mut item.kind {
                        absolutize(inner, dir);
                    }
                }
            }
            _ => {}
        }
    }
}

/// Takes every list of tables out of `map` (not descending into lists), keyed by its path,
/// with the origin of its first occurrence.
fn take_lists(
    map: &mut config::Map<String, Value>,
    path: &mut Vec<String>,
    out: &mut BTreeMap<Vec<String>, (Option<String>, Vec<Value>)>,
) {
    let keys: Vec<String> = map.keys().cloned().collect();
    for key in keys {
        path.push(key.clone());
        let is_list = map.get(&key).is_some_and(|v| {
            matches!(&v.kind, ValueKind::Array(a) if !a.is_empty() && a.iter().all(|i| matches!(i.kind, ValueKind::Table(_))))
        });
        if is_list {
            if let Some(list) = map.shift_remove(&key) {
                let origin = list.origin().map(str::to_owned);
                let entry = out.entry(path.clone()).or_insert_with(|| (origin, Vec::new()));
                if let ValueKind::Array(items) = list.kind {
                    entry.1.extend(items);
                }
            }
        } else if let Some(Value { kind: ValueKind::Table(inner), .. }) = map.get_mut(&key) {
            take_lists(inner, path, out);
        }
        path.pop();
    }
}

/// An entry of a list named in two files: a problem at the second, naming the first.
fn duplicates(lists: &BTreeMap<Vec<String>, (Option<String>, Vec<Value>)>, layers: &[Layer]) -> Vec<Problem> {
    let mut problems = Vec::new();
    for (path, (_, items)) in lists {
        let mut seen: Vec<(String, usize, usize)> = Vec::new();
        for item in items {
            let ValueKind::Table(table) = &item.kind else { continue };
            let Some((field, id, value)) = IDENTITY.iter().find_map(|f| match table.get(*f) {
                Some(v @ Value { kind: ValueKind::String(s), .. }) => Some((*f, s.as_str(), v)),
                _ => None,
            }) else {
                continue;
            };
            let Some((_, at)) = spans(value.origin()) else { continue };
            let file = layers.iter().position(|l| l.holds(at.start)).unwrap_or(0);
            match seen.iter().find(|(name, _, f)| name == id && *f != file) {
                Some((_, first, f)) => problems.push(Problem {
                    path: format!("{}.{id}.{field}", path.join(".")),
                    message: format!(
                        "'{id}' is also declared in {}:{}; names must be unique across the files of a configuration",
                        layers[*f].name,
                        line_of(&layers[*f], *first)
                    ),
                    span: Some(at),
                    env: None,
                    help: None,
                }),
                None => seen.push((id.to_owned(), at.start, file)),
            }
        }
    }
    problems
}

fn line_of(layer: &Layer, at: usize) -> usize {
    let offset = at.saturating_sub(layer.base).min(layer.text.len());
    layer.text[..offset].matches('\n').count() + 1
}

fn insert_at(map: &mut config::Map<String, Value>, path: &[String], value: Value) {
    let Some((last, parents)) = path.split_last() else { return };
    let mut at = map;
    for key in parents {
        let entry = at.entry(key.clone()).or_insert_with(|| Value::new(None, ValueKind::Table(config::Map::new())));
        if !matches!(entry.kind, ValueKind::Table(_)) {
            *entry = Value::new(None, ValueKind::Table(config::Map::new()));
        }
        let ValueKind::Table(inner) = &mut entry.kind else { return };
        at = inner;
    }
    at.insert(last.clone(), value);
}

/// One file (or the concatenated lists) for `config`.
#[derive(Debug, Clone)]
struct File(config::Map<String, Value>);

impl config::Source for File {
    fn clone_into_box(&self) -> Box<dyn config::Source + Send + Sync> {
        Box::new(self.clone())
    }

    fn collect(&self) -> Result<config::Map<String, Value>, config::ConfigError> {
        Ok(self.0.clone())
    }
}

/// A key, quoted as a TOML basic string (JSON's escapes are TOML's), its place noted.
fn write_key(key: &str, place: Option<Range<usize>>, out: &mut Merged) {
    if let Some(place) = place.filter(|p| !p.is_empty()) {
        out.places.insert(out.text.len(), place);
    }
    out.text.push_str(&serde_json::to_string(key).unwrap_or_else(|_| "\"\"".to_owned()));
}

/// A value in TOML (tables inline), its place and those of everything in it noted.
fn write_value(value: &Value, out: &mut Merged) {
    if let Some((_, place)) = spans(value.origin()).filter(|(_, v)| !v.is_empty()) {
        out.places.insert(out.text.len(), place);
    }
    match &value.kind {
        ValueKind::Nil => out.text.push_str("\"\""),
        ValueKind::Boolean(b) => out.text.push_str(if *b { "true" } else { "false" }),
        ValueKind::I64(i) => out.text.push_str(&i.to_string()),
        ValueKind::I128(i) => out.text.push_str(&i.to_string()),
        ValueKind::U64(i) => out.text.push_str(&i.to_string()),
        ValueKind::U128(i) => out.text.push_str(&i.to_string()),
        ValueKind::Float(f) if f.is_nan() => out.text.push_str("nan"),
        ValueKind::Float(f) if f.is_infinite() => out.text.push_str(if *f > 0.0 { "inf" } else { "-inf" }),
        ValueKind::Float(f) => out.text.push_str(&format!("{f:?}")),
        ValueKind::String(s) => out.text.push_str(&serde_json::to_string(s).unwrap_or_else(|_| "\"\"".to_owned())),
        ValueKind::Array(items) => {
            out.text.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.text.push_str(", ");
                }
                write_value(item, out);
            }
            out.text.push(']');
        }
        ValueKind::Table(map) => {
            out.text.push('{');
            for (i, (k, v)) in map.iter().enumerate() {
                out.text.push_str(if i > 0 { ", " } else { " " });
                write_key(k, spans(v.origin()).map(|(key, _)| key), out);
                out.text.push_str(" = ");
                write_value(v, out);
            }
            out.text.push_str(if map.is_empty() { "}" } else { " }" });
        }
    }
}
