//! Configuration problems shown as cargo shows compile errors: the named key path and what is
//! wrong, said once, then `file:line:col`, the line and a caret under the key or value.

use std::fmt;
use std::ops::Range;

/// One problem of a configuration file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// Named key path (`adapters.clock.tools.utc_now.timeout_ms`); empty for syntax errors.
    pub path: String,
    /// What is wrong.
    pub message: String,
    /// Byte range in the file, when the problem is written there.
    pub span: Option<Range<usize>>,
    /// The environment variable the value came from.
    pub env: Option<String>,
    /// How to fix it (`did you mean `base_urls`?`).
    pub help: Option<String>,
}

/// Whether the named key `path` is `prefix` or lies below it (`a.b[2]` is within `a.b`,
/// `a.bc` is not); nothing is within the empty path of a syntax error.
pub fn within(path: &str, prefix: &str) -> bool {
    !prefix.is_empty() && path.strip_prefix(prefix).is_some_and(|rest| rest.is_empty() || rest.starts_with(['.', '[']))
}

/// Every problem of a configuration (one file or a set), in file order.
#[derive(Debug, Clone)]
pub struct Report {
    /// The configuration as a person names it.
    name: String,
    /// `(name, base, text)` of each file: a span is an offset into these texts laid end to
    /// end, each starting at its base.
    files: Vec<(String, usize, String)>,
    problems: Vec<Problem>,
}

impl Report {
    /// The problems of `text`, read from `name`.
    pub fn new(name: String, text: String, problems: Vec<Problem>) -> Self {
        Self::of_files(name.clone(), vec![(name, 0, text)], problems)
    }

    /// The problems of a set of files `(name, base, text)`, named `name`.
    pub fn of_files(name: String, files: Vec<(String, usize, String)>, problems: Vec<Problem>) -> Self {
        Self { name, files, problems }
    }

    /// The problems, in file order.
    pub fn problems(&self) -> &[Problem] {
        &self.problems
    }

    /// Every problem on one line (for a log field): `file:line:col: key: what (help: ...)`,
    /// separated by `; `.
    pub fn one_line(&self) -> String {
        let mut out = Vec::with_capacity(self.problems.len());
        for p in &self.problems {
            let at = match (&p.env, &p.span) {
                (Some(var), _) => format!("environment variable {var}"),
                (None, Some(span)) => {
                    let (file, line, column, _, _) = self.position(span);
                    format!("{file}:{line}:{column}")
                }
                (None, None) => self.name.clone(),
            };
            let key = if p.path.is_empty() { String::new() } else { format!("{}: ", p.path) };
            let help = p.help.as_ref().map(|h| format!(" (help: {h})")).unwrap_or_default();
            out.push(format!("{at}: {key}{}{help}", p.message));
        }
        out.join("; ")
    }

    /// The file an offset of the set lies in: its name, and the offset within its text.
    fn file_of(&self, offset: usize) -> (&str, &str, usize) {
        let (name, base, text) = self
            .files
            .iter()
            .rev()
            .find(|(_, base, _)| *base <= offset)
            .or(self.files.first())
            .map_or(("", 0, ""), |(n, b, t)| (n.as_str(), *b, t.as_str()));
        (name, text, offset.saturating_sub(base).min(text.len()))
    }

    /// The file, 1-based line and column (in characters) of an offset of the set, the line's
    /// text, and the span's width on that line.
    fn position(&self, span: &Range<usize>) -> (&str, usize, usize, &str, usize) {
        let (name, text, offset) = self.file_of(span.start);
        let start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
        let end = text[offset..].find('\n').map_or(text.len(), |i| offset + i);
        let line = text[..start].matches('\n').count() + 1;
        let column = text[start..offset].chars().count() + 1;
        let until = (offset + span.end.saturating_sub(span.start)).min(end);
        let width = text[offset..until].chars().count().max(1);
        (name, line, column, text[start..end].trim_end_matches('\r'), width)
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for p in &self.problems {
            match p.path.as_str() {
                "" => writeln!(f, "error: {}", p.message)?,
                path => writeln!(f, "error: {path}: {}", p.message)?,
            }
            // The gutter is as wide as the line number, and `= help` stands in it (as rustc's).
            let mut pad = " ".to_owned();
            match (&p.span, &p.env) {
                (_, Some(var)) => writeln!(f, "  --> environment variable {var}")?,
                (Some(span), None) => {
                    let (file, line, column, text, under) = self.position(span);
                    pad = " ".repeat(line.to_string().len());
                    writeln!(f, "{pad}--> {file}:{line}:{column}")?;
                    writeln!(f, "{pad} |")?;
                    writeln!(f, "{line} | {text}")?;
                    writeln!(f, "{pad} | {}{}", " ".repeat(column - 1), "^".repeat(under))?;
                }
                (None, None) => writeln!(f, "  --> {}", self.name)?,
            }
            if let Some(help) = &p.help {
                writeln!(f, "{pad} = help: {help}")?;
            }
            writeln!(f)?;
        }
        match self.problems.len() {
            1 => write!(f, "error: {} has 1 problem", self.name),
            n => write!(f, "error: {} has {n} problems", self.name),
        }
    }
}
