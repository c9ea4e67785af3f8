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

/// Every problem of one file, in file order.
#[derive(Debug, Clone)]
pub struct Report {
    name: String,
    text: String,
    problems: Vec<Problem>,
}

impl Report {
    /// The problems of `text`, read from `name`.
    pub fn new(name: String, text: String, problems: Vec<Problem>) -> Self {
        Self { name, text, problems }
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
                    let (line, column, _) = self.position(span.start);
                    format!("{}:{line}:{column}", self.name)
                }
                (None, None) => self.name.clone(),
            };
            let key = if p.path.is_empty() { String::new() } else { format!("{}: ", p.path) };
            let help = p.help.as_ref().map(|h| format!(" (help: {h})")).unwrap_or_default();
            out.push(format!("{at}: {key}{}{help}", p.message));
        }
        out.join("; ")
    }

    /// 1-based line and column (in characters) of a byte offset, and the line's text.
    fn position(&self, offset: usize) -> (usize, usize, &str) {
        let offset = offset.min(self.text.len());
        let start = self.text[..offset].rfind('\n').map_or(0, |i| i + 1);
        let end = self.text[offset..].find('\n').map_or(self.text.len(), |i| offset + i);
        let line = self.text[..start].matches('\n').count() + 1;
        let column = self.text[start..offset].chars().count() + 1;
        (line, column, self.text[start..end].trim_end_matches('\r'))
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for p in &self.problems {
            match p.path.as_str() {
                "" => writeln!(f, "error: {}", p.message)?,
                path => writeln!(f, "error: {path}: {}", p.message)?,
            }
            match (&p.span, &p.env) {
                (_, Some(var)) => writeln!(f, "  --> environment variable {var}")?,
                (Some(span), None) => {
                    let (line, column, text) = self.position(span.start);
                    let width = line.to_string().len();
                    let under = self.text[span.start.min(self.text.len())..span.end.min(self.text.len())]
                        .lines()
                        .next()
                        .map_or(1, |s| s.chars().count().max(1));
                    let pad = " ".repeat(width);
                    writeln!(f, "{pad}--> {}:{line}:{column}", self.name)?;
                    writeln!(f, "{pad} |")?;
                    writeln!(f, "{line} | {text}")?;
                    writeln!(f, "{pad} | {}{}", " ".repeat(column - 1), "^".repeat(under))?;
                }
                (None, None) => writeln!(f, "  --> {}", self.name)?,
            }
            if let Some(help) = &p.help {
                writeln!(f, "  = help: {help}")?;
            }
            writeln!(f)?;
        }
        match self.problems.len() {
            1 => write!(f, "error: {} has 1 problem", self.name),
            n => write!(f, "error: {} has {n} problems", self.name),
        }
    }
}
