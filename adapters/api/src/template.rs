//! The one `{placeholder}` grammar of adapter configs (CLI argv entries, REST paths, query
//! values, headers and body strings). Adapters parse with it and keep their own rendering
//! and escaping rules (argv entries, percent-encoding).
//!
//! ```text
//! template    := ( text | "{{" | "}}" | placeholder )*     "{{" is a literal '{', "}}" a literal '}'
//! placeholder := "{" name "}"
//! name        := ( letter | digit | "_" | "-" )+            ASCII
//! ```
//!
//! Any other `{` or `}` is an error; errors give the 1-based character position.

/// Literal text or a placeholder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Part {
    /// Text, with `{{` / `}}` already unescaped.
    Lit(String),
    /// An argument name.
    Var(String),
}

/// A parsed template: literal runs and placeholders, in order; adjacent literals merged, no
/// empty literal (the empty text has no parts).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Template {
    parts: Vec<Part>,
}

/// What is wrong with a template, and where.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{kind} at character {position} of '{text}'{}", .kind.hint())]
pub struct TemplateError {
    /// The template as written.
    pub text: String,
    /// 1-based character position of the offending brace.
    pub position: usize,
    /// What is wrong.
    pub kind: TemplateErrorKind,
}

/// The kinds of template errors.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TemplateErrorKind {
    /// A `{` that no `}` closes.
    #[error("unclosed '{{'")]
    Unclosed,
    /// A `}` that closes nothing.
    #[error("unmatched '}}'")]
    Unmatched,
    /// `{}`.
    #[error("empty placeholder '{{}}'")]
    Empty,
    /// `{a b}` and other names outside the grammar.
    #[error("'{{{0}}}' is not an argument name")]
    BadName(String),
}

impl TemplateErrorKind {
    fn hint(&self) -> &'static str {
        match self {
            Self::Unclosed => " (write {{ for a literal brace)",
            Self::Unmatched => " (write }} for a literal brace)",
            Self::Empty => "",
            Self::BadName(_) => " (names use letters, digits, '_' and '-'; write {{ for a literal brace)",
        }
    }
}

impl Template {
    /// Parses `text` per the module's grammar.
    pub fn parse(text: &str) -> Result<Self, TemplateError> {
        let err = |position: usize, kind| TemplateError { text: text.to_owned(), position, kind };
        let mut parts = Vec::new();
        let mut lit = String::new();
        let mut chars = text.chars().enumerate().peekable();
        while let Some((i, c)) = chars.next() {
            match c {
                '{' | '}' if chars.peek().map(|&(_, n)| n) == Some(c) => {
                    chars.next();
                    lit.push(c);
                }
                '}' => return Err(err(i + 1, TemplateErrorKind::Unmatched)),
                '{' => {
                    let mut name = String::new();
                    loop {
                        match chars.next() {
                            Some((_, '}')) => break,
                            Some((_, '{')) | None => return Err(err(i + 1, TemplateErrorKind::Unclosed)),
                            Some((_, c)) => name.push(c),
                        }
                    }
                    if name.is_empty() {
                        return Err(err(i + 1, TemplateErrorKind::Empty));
                    }
                    if !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-') {
                        return Err(err(i + 1, TemplateErrorKind::BadName(name)));
                    }
                    if !lit.is_empty() {
                        parts.push(Part::Lit(std::mem::take(&mut lit)));
                    }
                    parts.push(Part::Var(name));
                }
                c => lit.push(c),
            }
        }
        if !lit.is_empty() {
            parts.push(Part::Lit(lit));
        }
        Ok(Self { parts })
    }

    /// The parts, in order.
    pub fn parts(&self) -> &[Part] {
        &self.parts
    }

    /// The parts, owned.
    pub fn into_parts(self) -> Vec<Part> {
        self.parts
    }

    /// The argument names used, in order (with repeats).
    pub fn vars(&self) -> impl Iterator<Item = &str> {
        self.parts.iter().filter_map(|p| match p {
            Part::Var(v) => Some(v.as_str()),
            Part::Lit(_) => None,
        })
    }

    /// The argument name when the template is exactly `{name}`.
    pub fn single_var(&self) -> Option<&str> {
        match self.parts.as_slice() {
            [Part::Var(v)] => Some(v),
            _ => None,
        }
    }

    /// The (unescaped) text when the template has no placeholder.
    pub fn as_literal(&self) -> Option<&str> {
        match self.parts.as_slice() {
            [] => Some(""),
            [Part::Lit(l)] => Some(l),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(text: &str) -> Vec<Part> {
        Template::parse(text).unwrap().parts
    }

    #[test]
    fn literals_placeholders_and_escapes() {
        let lit = |s: &str| Part::Lit(s.to_owned());
        let var = |s: &str| Part::Var(s.to_owned());
        assert_eq!(parts("--out={file}"), [lit("--out="), var("file")]);
        assert_eq!(parts("{a}{b-2}x{c_3}"), [var("a"), var("b-2"), lit("x"), var("c_3")]);
        assert_eq!(parts("{{x}} {{{y}}}"), [lit("{x} {"), var("y"), lit("}")]);
        assert_eq!(parts(""), []);
        let t = Template::parse("{x}").unwrap();
        assert_eq!((t.single_var(), t.as_literal()), (Some("x"), None));
        assert_eq!(Template::parse("{{q}}").unwrap().as_literal(), Some("{q}"));
        assert_eq!(Template::parse("a{b}c{b}").unwrap().vars().collect::<Vec<_>>(), ["b", "b"]);
    }

    #[test]
    fn errors_say_what_and_where() {
        let e = |text: &str| Template::parse(text).unwrap_err();
        assert_eq!(e("ab{cd").to_string(), "unclosed '{' at character 3 of 'ab{cd' (write {{ for a literal brace)");
        assert_eq!(e("a}b").to_string(), "unmatched '}' at character 2 of 'a}b' (write }} for a literal brace)");
        assert_eq!(e("x{}").to_string(), "empty placeholder '{}' at character 2 of 'x{}'");
        assert_eq!(e("é{a b}").kind, TemplateErrorKind::BadName("a b".to_owned()));
        assert_eq!(e("é{a b}").position, 2, "positions count characters, not bytes");
        assert!(e("{a b}").to_string().starts_with("'{a b}' is not an argument name at character 1"));
        for (text, position) in [("{", 1), ("}", 1), ("{a{b}}", 1), ("a}b{c}", 2), ("{a}}", 4)] {
            assert_eq!(e(text).position, position, "{text}");
        }
    }
}
