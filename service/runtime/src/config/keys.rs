//! The parsed config tree addressed by key paths: find, take out, rename and insert values,
//! the span where a path is written, and the path as a reader names it
//! (`adapters.clock.tools.utc_now.timeout_ms`).

use std::ops::Range;

use toml::Spanned;
use toml::de::{DeTable, DeValue};

/// One step of a key path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Seg {
    /// A table key.
    Key(String),
    /// An array element.
    Index(usize),
}

pub(super) fn value_at_or_root<'a, 'i>(root: &'a DeTable<'i>, path: &[Seg]) -> Option<&'a DeValue<'i>> {
    if path.is_empty() {
        return None;
    }
    value_at(root, path).map(Spanned::get_ref)
}

/// The key (depth first) under `table` holding the value an `invalid type: string "5000", ...`
/// error names, as serde writes it.
pub(super) fn offending(table: &DeTable<'_>, message: &str) -> Option<Vec<Seg>> {
    for (k, v) in table.iter() {
        let shown = match v.get_ref() {
            DeValue::String(s) => format!("string {s:?}"),
            DeValue::Integer(i) => format!("integer `{}`", i.as_str()),
            DeValue::Float(x) => format!("floating point `{}`", x.as_str()),
            DeValue::Boolean(b) => format!("boolean `{b}`"),
            DeValue::Table(t) => match offending(t, message) {
                Some(rest) => return Some([vec![Seg::Key(k.get_ref().to_string())], rest].concat()),
                None => "map".to_owned(),
            },
            DeValue::Array(_) => "sequence".to_owned(),
            DeValue::Datetime(_) => continue,
        };
        if message.starts_with(&format!("invalid type: {shown},"))
            || message.starts_with(&format!("invalid value: {shown},"))
        {
            return Some(vec![Seg::Key(k.get_ref().to_string())]);
        }
    }
    None
}

pub(super) fn key_span(root: &DeTable<'_>, path: &[Seg]) -> Option<Range<usize>> {
    let (Seg::Key(k), parent) = path.split_last()? else { return None };
    let table = if parent.is_empty() { Some(root) } else { value_at(root, parent)?.get_ref().as_table() };
    table?.get_key_value(k.as_str()).map(|(k, _)| k.span()).filter(|s| !s.is_empty())
}

pub(super) fn value_at<'a, 'i>(root: &'a DeTable<'i>, path: &[Seg]) -> Option<&'a Spanned<DeValue<'i>>> {
    let (first, rest) = path.split_first()?;
    let Seg::Key(k) = first else { return None };
    let mut value = root.get(k.as_str())?;
    for seg in rest {
        value = match (value.get_ref(), seg) {
            (DeValue::Table(t), Seg::Key(k)) => t.get(k.as_str())?,
            (DeValue::Array(a), Seg::Index(i)) => a.get(*i)?,
            _ => return None,
        };
    }
    Some(value)
}

pub(super) fn table_at<'a, 'i>(root: &'a mut DeTable<'i>, path: &[Seg]) -> Option<&'a mut DeTable<'i>> {
    let mut table = root;
    let mut segs = path.iter().peekable();
    while let Some(seg) = segs.next() {
        let Seg::Key(k) = seg else { return None };
        let mut value = table.get_mut(k.as_str())?.get_mut();
        while let Some(Seg::Index(i)) = segs.peek() {
            let DeValue::Array(a) = value else { return None };
            value = a.get_mut(*i)?.get_mut();
            segs.next();
        }
        let DeValue::Table(t) = value else { return None };
        table = t;
    }
    Some(table)
}

/// Takes the value at `path` out of the tree (`None` when the path does not end in a key).
pub(super) fn remove<'i>(root: &mut DeTable<'i>, path: &[Seg]) -> Option<Spanned<DeValue<'i>>> {
    let Some((Seg::Key(last), parent)) = path.split_last() else { return None };
    table_at(root, parent).and_then(|t| t.remove(last.as_str()))
}

/// Where `path` is written: the key of a table entry, or the element of an array.
pub(super) fn span_of(root: &DeTable<'_>, path: &[Seg]) -> Option<Range<usize>> {
    let (last, parent) = path.split_last()?;
    if let Seg::Key(k) = last {
        let table =
            if parent.is_empty() { Some(root) } else { value_at(root, parent).and_then(|v| v.get_ref().as_table()) };
        if let Some(span) = table.and_then(|t| t.get(k.as_str())).map(Spanned::span).filter(|s| !s.is_empty()) {
            return Some(span);
        }
    }
    value_at(root, path).map(Spanned::span).filter(|s| !s.is_empty()).or_else(|| span_of(root, parent))
}

/// `adapters.clock.tools.utc_now` -> `adapters[0].tools[2]` (elements named by their `name`,
/// or an adapter by its `kind`); `adapters[1].name` is taken as written.
pub(super) fn parse_key(key: &str) -> Vec<Seg> {
    let mut out = Vec::new();
    for part in key.split('.').filter(|p| !p.is_empty()) {
        let mut pieces = part.split('[');
        out.push(Seg::Key(pieces.next().unwrap_or_default().to_owned()));
        for index in pieces {
            match index.trim_end_matches(']').parse() {
                Ok(i) => out.push(Seg::Index(i)),
                Err(_) => out.push(Seg::Key(index.trim_end_matches(']').to_owned())),
            }
        }
    }
    out
}

pub(super) fn resolve(root: &DeTable<'_>, path: &[Seg]) -> Vec<Seg> {
    let mut out: Vec<Seg> = Vec::with_capacity(path.len());
    for seg in path {
        if let (Seg::Key(name), Some(DeValue::Array(a))) = (seg, value_at(root, &out).map(Spanned::get_ref)) {
            let by = |field: &str| {
                a.iter().position(|e| e.get_ref().get(field).and_then(|v| v.get_ref().as_str()) == Some(name))
            };
            if let Some(i) = by("name").or_else(|| by("kind")) {
                out.push(Seg::Index(i));
                continue;
            }
        }
        out.push(seg.clone());
    }
    out
}

/// The path as a reader names it: `adapters.clock.tools.utc_now.timeout_ms`.
pub(super) fn named(root: &DeTable<'_>, path: &[Seg]) -> String {
    let mut out = String::new();
    for (n, seg) in path.iter().enumerate() {
        match seg {
            Seg::Key(k) => {
                if !out.is_empty() {
                    out.push('.');
                }
                if k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') {
                    out.push_str(k);
                } else {
                    out.push_str(&format!("{k:?}"));
                }
            }
            Seg::Index(i) => {
                let element = value_at(root, &path[..=n]);
                let name = element.and_then(|e| e.get_ref().get("name")).and_then(|v| v.get_ref().as_str());
                match name {
                    Some(name) if !name.contains('.') => out.push_str(&format!(".{name}")),
                    _ => out.push_str(&format!("[{i}]")),
                }
            }
        }
    }
    out
}
