//! Reading a configuration with every key located: each file of the set parsed with spans
//! (`layers`), merged with the `MCP_RUNTIME__*` overrides by the `config` crate (`merge`), and a
//! deserialization of the merged tree that collects every error (not the first only) as
//! [`Problem`]s at their named path, each shown in the file it was written in.
//!
//! The deserialization is ours (`toml`'s deserializer over the merged, spanned tree, with
//! `serde_path_to_error`), not `config`'s: `config` turns `"5000"` into a number where a
//! number is expected, and a string written for a number is a mistake this report names.

use std::path::PathBuf;

use toml::Spanned;
use toml::de::{DeArray, DeTable, DeValue};

pub use super::keys::Seg;
use super::keys::{key_span, named, offending, parse_key, remove, resolve, span_of, table_at, value_at_or_root};
use super::layers::{self, Format, Layer};
use super::merge::Merged;
use super::raw::RawConfig;
use super::refine::{deserialize, refine};
use super::report::{Problem, Report};
use super::{ConfigError, Problems};

/// The files a configuration was read from and the environment overrides laid over them,
/// kept to locate problems found after parsing (validation, building the adapters).
#[derive(Debug, Clone, Default)]
pub struct Source {
    /// The configuration as a person names it: the file (`<embedded default.toml>` for the
    /// built-in one), or the files of a set.
    pub name: String,
    layers: Vec<Layer>,
    prefix: String,
    /// The `MCP_RUNTIME__*` variables, as given.
    vars: Vec<(String, String)>,
    /// `(path, variable, value)` of every `MCP_RUNTIME__*` override.
    env: Vec<(Vec<Seg>, String, String)>,
}

impl Source {
    /// The text of a one-file configuration; for a set, its files one after the other (secrets
    /// may be inline: show it only redacted).
    pub fn text(&self) -> String {
        match self.layers.as_slice() {
            [one] => one.text.clone(),
            all => all.iter().map(|l| format!("# {}\n{}\n", l.name, l.text)).collect(),
        }
    }

    /// The configuration in effect (every file merged, the overrides applied) as JSON, for
    /// the operator console to show redacted; `Null` if it does not parse.
    pub fn merged_json(&self) -> serde_json::Value {
        self.merged().ok().and_then(|(m, _)| toml::from_str(&m.text).ok()).unwrap_or_default()
    }

    /// The files, each with its name and text.
    pub fn files(&self) -> impl Iterator<Item = (&str, &str)> {
        self.layers.iter().map(|l| (l.name.as_str(), l.text.as_str()))
    }

    /// `text` from `name` (no folder: relative paths stay as written), with the
    /// `{prefix}__SECTION__KEY` variables of `env` as overrides.
    pub fn new(name: String, text: String, env: impl IntoIterator<Item = (String, String)>, prefix: &str) -> Self {
        Self::set(name.clone(), vec![(name, text, None)], env, prefix)
    }

    /// A set of files `(name, text, path)`, later ones overriding earlier ones, named `title`.
    pub fn set(
        title: String,
        files: Vec<(String, String, Option<PathBuf>)>,
        env: impl IntoIterator<Item = (String, String)>,
        prefix: &str,
    ) -> Self {
        let head = format!("{prefix}__");
        let vars: Vec<(String, String)> = env.into_iter().filter(|(var, _)| var.starts_with(&head)).collect();
        let mut overrides: Vec<_> = vars
            .iter()
            .map(|(var, value)| {
                let path = var[head.len()..].split("__").map(|k| Seg::Key(k.to_ascii_lowercase())).collect();
                (path, var.clone(), value.clone())
            })
            .collect();
        overrides.sort_by(|a, b| a.1.cmp(&b.1));
        Self { name: title, layers: layers::layers(files), prefix: prefix.to_owned(), vars, env: overrides }
    }

    /// The set merged with the overrides as one TOML text with the places of its keys and
    /// values in the files, and the merge's problems; or the syntax problems of every file.
    fn merged(&self) -> Result<(Merged, Vec<Problem>), Vec<Problem>> {
        let mut maps = Vec::with_capacity(self.layers.len());
        let mut syntax = Vec::new();
        for layer in &self.layers {
            match layers::parse(layer) {
                Ok(map) => maps.push(map),
                Err(p) => syntax.extend(p),
            }
        }
        if !syntax.is_empty() {
            return Err(syntax);
        }
        super::merge::merge(maps, &self.layers, &self.vars, &self.prefix)
            .map_err(|e| vec![Problem { path: String::new(), message: e, span: None, env: None, help: None }])
    }

    /// The file as the raw config type, or every problem of it.
    pub fn read(&self) -> Result<RawConfig, ConfigError> {
        match self.read_lenient()? {
            (raw, problems, _) if problems.is_empty() => Ok(raw),
            (_, problems, _) => Err(self.report(problems)),
        }
    }

    /// The file as the raw config type and its problems: each value the reading refused is
    /// reported and left out (its default stands in), so validation can go on to find the
    /// problems of the rest. `Err` only when nothing can be read: a syntax error, or a
    /// required key that is missing. The third part names the keys a near miss was read as
    /// (`server.listen` for `listn`): their value's own problems wait until the key is fixed.
    pub fn read_lenient(&self) -> Result<(RawConfig, Vec<Problem>, Vec<String>), ConfigError> {
        // The common case, one valid TOML file without overrides, in one light pass: the
        // spanned tree below costs several times the catalog it describes while loading
        // (tokens, events, tree at once; RSS keeps that peak), and is needed only to locate
        // problems or to merge a set. Anything this pass refuses is read again below.
        if let [one] = self.layers.as_slice()
            && self.env.is_empty()
            && one.format == Format::Toml
            && let Ok(raw) = basic_toml::from_str(&one.text)
        {
            return Ok((raw, Vec::new(), Vec::new()));
        }
        let (merged, merge_problems) = self.merged().map_err(|p| self.report(p))?;
        let (mut root, syntax) = DeTable::parse_recoverable(&merged.text);
        if let Some(e) = syntax.first() {
            return Err(self.report(vec![Problem {
                path: String::new(),
                message: format!("the merged configuration does not parse (a bug; please report it): {}", e.message()),
                span: None,
                env: None,
                help: None,
            }]));
        }
        let mut problems: Vec<Problem> = Vec::new();
        let mut renamed = Vec::new();
        // Where each near miss was moved to, and its problem.
        let mut moves: Vec<(String, usize)> = Vec::new();
        // Each round fixes what the last error was about (drops the key, or renames a near
        // miss) so the next round finds the next error. A missing key drops the adapter or
        // tool it is missing from, to go on to the rest of the file; what is read then lacks
        // that element, so it is not returned (nor validated).
        let mut raw = None;
        let mut dropped = false;
        for _ in 0..64 {
            let error = match deserialize(&root) {
                Ok(read) => {
                    raw = Some(read);
                    break;
                }
                Err(e) => e,
            };
            let (path, message) = refine(root.get_ref(), error);
            let (problem, fixed) = self.classify(root.get_mut(), path, &message);
            // A near miss's value refused under the key it was moved to: the near miss's own
            // problem says so, rather than a second one about a key the file does not have
            // (`base_url = "…"`: did you mean `base_urls`? It takes a list).
            // Its key missing once the refused value is dropped is that problem too.
            let missing = problem
                .message
                .strip_prefix("missing key `")
                .map(|k| format!("{}.{}", problem.path, k.trim_end_matches('`')));
            dropped |= missing.is_some() && fixed.is_some();
            if let Some((_, i)) =
                moves.iter().find(|(to, _)| within(&problem.path, to) || missing.as_deref() == Some(to.as_str()))
            {
                if missing.is_none() {
                    let near = &mut problems[*i];
                    let said = near.help.take().unwrap_or_default();
                    near.help = Some(format!("{said} It would refuse this value: {}", problem.message));
                }
                match fixed {
                    Some(_) => continue,
                    None => break,
                }
            }
            problems.push(problem);
            match fixed {
                None => break,
                Some(moved) => {
                    moves.extend(moved.iter().map(|to| (to.clone(), problems.len() - 1)));
                    renamed.extend(moved);
                }
            }
        }
        // Spans in the merged text → the places in the files.
        for p in &mut problems {
            p.span = p.span.take().and_then(|s| merged.place(s));
        }
        problems.extend(merge_problems);
        match raw {
            Some(raw) if !dropped => Ok((raw, problems, renamed)),
            _ => Err(self.report(problems)),
        }
    }

    /// A validation problem (`adapters[1].name`, `adapters.clock.tools.utc_now.path`) located
    /// in the file; other errors pass through.
    pub fn locate(&self, error: ConfigError) -> ConfigError {
        match error {
            ConfigError::Invalid(problems) => self.report(self.locate_all(problems)),
            other => other,
        }
    }

    /// Problems found after reading (keys as in the file, elements of a list by their
    /// `name`), each located: the key's own span for a problem about the key, else its value.
    pub fn locate_all(&self, problems: Problems) -> Vec<Problem> {
        let merged = self.merged().map(|(m, _)| m).unwrap_or_default();
        let (tree, _) = DeTable::parse_recoverable(&merged.text);
        let tree = tree.get_ref();
        problems
            .into_iter()
            .map(|p| {
                let path = resolve(tree, &parse_key(&p.key));
                let span = if p.at_key { key_span(tree, &path) } else { None };
                Problem {
                    path: named(tree, &path),
                    message: p.problem,
                    span: span.or_else(|| span_of(tree, &path)).and_then(|s| merged.place(s)),
                    env: self.variable_of(&path),
                    help: p.help,
                }
            })
            .collect()
    }

    /// `problems` as the report of this configuration, in file order.
    pub fn report(&self, mut problems: Vec<Problem>) -> ConfigError {
        problems.sort_by_key(|p| p.span.as_ref().map_or(usize::MAX, |s| s.start));
        let files = self.layers.iter().map(|l| (l.name.clone(), l.base, l.text.clone())).collect();
        ConfigError::File(Report::of_files(self.name.clone(), files, problems))
    }

    fn variable_of(&self, path: &[Seg]) -> Option<String> {
        self.env.iter().find(|(p, _, _)| path.starts_with(p)).map(|(_, var, _)| var.clone())
    }

    /// The problem an error is, and whether the tree could be changed to look past it:
    /// `None` if not, else `Some` with the named key a near miss was moved to, if any.
    fn classify(&self, root: &mut DeTable<'_>, mut at: Vec<Seg>, message: &str) -> (Problem, Option<Option<String>>) {
        let text;
        let mut help = None;
        // An unknown key is shown at the key, not at its value.
        let mut about_key = false;
        let fix = if let Some((key, expected)) = quoted_pair(message, "unknown field") {
            about_key = true;
            if at.last() != Some(&Seg::Key(key.clone())) {
                at.push(Seg::Key(key.clone()));
            }
            let suggestion = closest(&key, &expected);
            text = format!("unknown key `{key}`");
            help = Some(match &suggestion {
                Some(s) => format!("did you mean `{s}`?"),
                None if expected.is_empty() => "this table takes no keys".to_owned(),
                None => format!("the keys here are {}", quoted_list(&expected)),
            });
            suggestion.map_or(Fix::Drop, Fix::Rename)
        } else if let Some((key, _)) = quoted_pair(message, "missing field") {
            // A near miss of the missing key, written in the same table, is the mistake.
            let written: Vec<String> = value_at_or_root(root, &at)
                .and_then(DeValue::as_table)
                .map(|t| t.keys().map(|k| k.get_ref().to_string()).collect())
                .unwrap_or_default();
            // So is another config's word for it (`command` for `executable`).
            let near = written.iter().find(|w| closest(w, std::slice::from_ref(&key)).is_some());
            let near = near
                .map(|w| (w.as_str(), None))
                .or_else(|| super::wording::stand_in(&key, &written).map(|(w, note)| (w, Some(note))));
            match near {
                Some((near, note)) => {
                    at.push(Seg::Key(near.to_owned()));
                    text = format!("unknown key `{near}`");
                    // `command = [program, arguments...]`, as the `mcp` adapter takes it.
                    let split = if key == "executable" { split_command(root, &at) } else { None };
                    help = Some(match (note, split) {
                        (Some(note), Some((program, args))) => format!(
                            "did you mean `{key}`? A CLI tool takes its program and its arguments apart: `{key} = {program}` and `args = {args}` ({note})"
                        ),
                        (Some(note), None) => format!("did you mean `{key}`? ({note})"),
                        (None, _) => format!("did you mean `{key}`?"),
                    });
                    Fix::Rename(key)
                }
                None => {
                    text = format!("missing key `{key}`");
                    Fix::DropElement
                }
            }
        } else if let Some((variant, expected)) = quoted_pair(message, "unknown variant") {
            text = format!("unknown value `{variant}`");
            help = Some(match closest(&variant, &expected) {
                Some(s) => format!("did you mean `{s}`?"),
                None => format!("it is one of {}", quoted_list(&expected)),
            });
            Fix::Stop
        } else {
            // An error inside a flattened table stops at the table: find the value it is about.
            if let Some(key) =
                value_at_or_root(root, &at).and_then(DeValue::as_table).and_then(|t| offending(t, message))
            {
                at.extend(key);
            }
            if let Some(Seg::Key(key)) = at.last() {
                help = super::wording::unquote(message, key);
            }
            text = super::wording::plain(message);
            Fix::Drop
        };
        let span = if about_key || matches!(fix, Fix::Rename(_)) { key_span(root, &at) } else { None };
        let problem = Problem {
            path: named(root, &at),
            message: text,
            span: span.or_else(|| span_of(root, &at)),
            env: self.variable_of(&at),
            help,
        };
        let fixed = match fix {
            Fix::Drop => remove(root, &at).map(|_| None),
            Fix::Rename(to) => {
                let parent = &at[..at.len() - 1];
                let moved = named(root, &[parent, &[Seg::Key(to.clone())]].concat());
                let value = remove(root, &at);
                match (value, table_at(root, parent)) {
                    (Some(v), Some(t)) => {
                        if !t.contains_key(to.as_str()) {
                            t.insert(Spanned::new(0..0, to.into()), v);
                        }
                        Some(Some(moved))
                    }
                    _ => None,
                }
            }
            Fix::DropElement => remove_element(root, &at).map(|_| None),
            Fix::Stop => None,
        };
        (problem, fixed)
    }
}

/// `command = ["/bin/cat", "{path}"]` at `at`, as a CLI tool takes it apart: the program
/// (left at `at`, for the move to `executable`) and the arguments (`args`, unless the table
/// has its own), both as written in TOML. `None` unless it is a list of strings.
fn split_command(root: &mut DeTable<'_>, at: &[Seg]) -> Option<(String, String)> {
    let (Seg::Key(key), parent) = at.split_last()? else { return None };
    let table = table_at(root, parent)?;
    let value = table.get_mut(key.as_str())?;
    let DeValue::Array(items) = value.get_ref() else { return None };
    let words: Vec<String> = items.iter().map(|i| i.get_ref().as_str().map(str::to_owned)).collect::<Option<_>>()?;
    let (program, rest) = words.split_first()?;
    let quoted = |w: &String| serde_json::to_string(w).unwrap_or_default();
    let args = format!("[{}]", rest.iter().map(quoted).collect::<Vec<_>>().join(", "));
    let span = value.span();
    *value = Spanned::new(span.clone(), DeValue::String(program.clone().into()));
    if !table.contains_key("args") {
        let items = rest.iter().map(|w| Spanned::new(span.clone(), DeValue::String(w.clone().into()))).collect();
        table.insert(Spanned::new(span, "args".into()), Spanned::new(0..0, DeValue::Array(items)));
    }
    Some((quoted(program), args))
}

/// Removes the element of a list nearest around `path` (`adapters[0].tools[1]` for a problem
/// of that tool); `None` if `path` is in no list.
fn remove_element<'i>(root: &mut DeTable<'i>, path: &[Seg]) -> Option<Spanned<DeValue<'i>>> {
    let at = path.iter().rposition(|s| matches!(s, Seg::Index(_)))?;
    let (Seg::Index(i), [parent @ .., Seg::Key(list)]) = (&path[at], &path[..at]) else { return None };
    match table_at(root, parent)?.get_mut(list.as_str())?.get_mut() {
        DeValue::Array(items) => {
            // A `DeArray` has no `remove`: the others, in their order, make a new one.
            let mut gone = None;
            for (j, item) in std::mem::replace(items, DeArray::new()).into_iter().enumerate() {
                if j == *i {
                    gone = Some(item);
                } else {
                    items.push(item);
                }
            }
            gone
        }
        _ => None,
    }
}

/// Whether the problem at `path` is about `key` (a dotted path) or something inside it.
fn within(path: &str, key: &str) -> bool {
    path.strip_prefix(key).is_some_and(|rest| rest.is_empty() || rest.starts_with(['.', '[']))
}

/// How the tree changes to look past a problem.
enum Fix {
    /// Drop the key.
    Drop,
    /// Move the value to this key (a near miss).
    Rename(String),
    /// Drop the element of a list (an adapter, a tool) the problem is in.
    DropElement,
    /// Nothing to do: the search ends.
    Stop,
}

/// `unknown field `x`, expected one of `a`, `b`` -> (`x`, [`a`, `b`]).
fn quoted_pair(message: &str, head: &str) -> Option<(String, Vec<String>)> {
    let rest = message.strip_prefix(head)?;
    let mut quoted = rest.split('`').skip(1).step_by(2).map(str::to_owned);
    let first = quoted.next()?;
    Some((first, quoted.collect()))
}

fn quoted_list(items: &[String]) -> String {
    items.iter().map(|s| format!("`{s}`")).collect::<Vec<_>>().join(", ")
}

/// The candidate nearest to `word`, when near enough to be a typo (the one "did you mean"
/// rule of every config problem).
fn closest(word: &str, candidates: &[String]) -> Option<String> {
    mcp_adapter_api::closest(word, candidates.iter().map(String::as_str)).map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    /// The light pass and the reporting pass read the shipped configs to the same values, so a
    /// valid file means the same whichever reads it.
    #[test]
    fn both_readers_agree_on_every_shipped_config() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let mut files = Vec::new();
        for dir in ["service/config", "service/config/examples", "loadtest/config", "tests/fixtures"] {
            for entry in std::fs::read_dir(root.join(dir)).expect(dir) {
                let path = entry.expect("dir entry").path();
                if path.extension().is_some_and(|e| e == "toml") {
                    files.push(path);
                }
            }
        }
        assert!(files.len() >= 8, "found only {files:?}");
        for path in files {
            let text = std::fs::read_to_string(&path).expect("readable");
            let light: serde_json::Value = basic_toml::from_str(&text).expect("the light pass reads it");
            let full: serde_json::Value = toml::from_str(&text).expect("toml reads it");
            assert_eq!(light, full, "{}", path.display());
        }
    }
}
