//! RFC 6570 level-1 matching (`{var}` expansions only), enough to route `resources/read`
//! to the adapter whose template produced a URI.

use std::collections::BTreeMap;

/// A parsed template: literal text and variable names, alternating.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UriTemplate {
    source: String,
    parts: Vec<Part>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    Literal(String),
    Var(String),
}

impl UriTemplate {
    /// Parses `test://template/{id}/data`. Rejects unbalanced braces, empty names, adjacent
    /// variables (ambiguous) and operators beyond level 1.
    pub fn parse(template: &str) -> Result<Self, String> {
        let mut parts = Vec::new();
        let mut rest = template;
        while let Some(open) = rest.find('{') {
            if open > 0 {
                parts.push(Part::Literal(rest[..open].to_owned()));
            } else if matches!(parts.last(), Some(Part::Var(_))) {
                return Err(format!("adjacent variables in '{template}' are ambiguous"));
            }
            let close = rest[open..].find('}').ok_or_else(|| format!("unclosed '{{' in '{template}'"))?;
            let name = &rest[open + 1..open + close];
            if name.is_empty() || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
                return Err(format!("unsupported variable '{{{name}}}' in '{template}' (only {{name}} is supported)"));
            }
            parts.push(Part::Var(name.to_owned()));
            rest = &rest[open + close + 1..];
        }
        if rest.contains('}') {
            return Err(format!("unbalanced '}}' in '{template}'"));
        }
        if !rest.is_empty() {
            parts.push(Part::Literal(rest.to_owned()));
        }
        Ok(Self { source: template.to_owned(), parts })
    }

    /// The template as written.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// The variables when `uri` is an expansion of this template. A variable matches one or
    /// more characters other than `/`, `?` and `#`.
    pub fn matches(&self, uri: &str) -> Option<BTreeMap<String, String>> {
        let mut vars = BTreeMap::new();
        let mut rest = uri;
        let mut parts = self.parts.iter().peekable();
        while let Some(part) = parts.next() {
            match part {
                Part::Literal(lit) => rest = rest.strip_prefix(lit.as_str())?,
                Part::Var(name) => {
                    let end = match parts.peek() {
                        Some(Part::Literal(next)) => rest.find(next.as_str())?,
                        _ => rest.len(),
                    };
                    let value = &rest[..end];
                    if value.is_empty() || value.contains(['/', '?', '#']) {
                        return None;
                    }
                    vars.insert(name.clone(), value.to_owned());
                    rest = &rest[end..];
                }
            }
        }
        rest.is_empty().then_some(vars)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_level_one_templates() {
        let t = UriTemplate::parse("test://template/{id}/data").unwrap();
        assert_eq!(t.matches("test://template/42/data").unwrap()["id"], "42");
        assert!(t.matches("test://template//data").is_none());
        assert!(t.matches("test://template/a/b/data").is_none());
        assert!(t.matches("test://template/42/data/x").is_none());
        let t = UriTemplate::parse("file:///{dir}/{name}.txt").unwrap();
        let v = t.matches("file:///docs/readme.txt").unwrap();
        assert_eq!((v["dir"].as_str(), v["name"].as_str()), ("docs", "readme"));
    }

    #[test]
    fn rejects_what_it_cannot_match() {
        assert!(UriTemplate::parse("x://{a}{b}").is_err());
        assert!(UriTemplate::parse("x://{+path}").is_err());
        assert!(UriTemplate::parse("x://{a").is_err());
        assert!(UriTemplate::parse("x://a}").is_err());
    }
}
