//! Configuration problems: one ([`ConfigProblem`], a key and what is wrong with it) and all of
//! a load ([`Problems`]), so that one run of `check` or `serve` reports every problem of a
//! configuration, not the first.

use std::fmt;

/// A configuration problem: a dotted key relative to where it was found (the adapter's
/// section, e.g. `tools.get_user.path`), what is wrong, and how to fix it when that is known.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{key}: {problem}")]
pub struct ConfigProblem {
    /// Dotted key, relative to the section being validated.
    pub key: String,
    /// What is wrong, in words a person can act on.
    pub problem: String,
    /// How to fix it (`did you mean `stdin`?`), shown apart from the problem.
    pub help: Option<String>,
    /// The problem is the key itself (an unknown or misspelt key), not its value: a report
    /// points at the key.
    pub at_key: bool,
}

impl ConfigProblem {
    /// A problem with the value at `key`.
    pub fn new(key: impl Into<String>, problem: impl Into<String>) -> Self {
        Self { key: key.into(), problem: problem.into(), help: None, at_key: false }
    }

    /// The same problem with a hint on how to fix it.
    #[must_use]
    pub fn help(self, help: impl Into<String>) -> Self {
        Self { help: Some(help.into()), ..self }
    }

    /// The same problem, about the key rather than its value.
    #[must_use]
    pub fn at_key(self) -> Self {
        Self { at_key: true, ..self }
    }

    /// The same problem with its key below `prefix` (`tools.t` + `path` → `tools.t.path`).
    #[must_use]
    pub fn under(self, prefix: &str) -> Self {
        let key = match (prefix.is_empty(), self.key.is_empty()) {
            (true, _) => self.key,
            (false, true) => prefix.to_owned(),
            (false, false) => format!("{prefix}.{}", self.key),
        };
        Self { key, ..self }
    }
}

/// Every problem found so far. Validation goes on past a problem, so a file with five
/// mistakes takes one run to see them all; `?` on a single [`ConfigProblem`] still works
/// where going on makes no sense.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Problems(Vec<ConfigProblem>);

impl Problems {
    /// None yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Records `problem`.
    pub fn push(&mut self, problem: ConfigProblem) {
        self.0.push(problem);
    }

    /// Records a problem at `key`.
    pub fn add(&mut self, key: impl Into<String>, problem: impl Into<String>) {
        self.push(ConfigProblem::new(key, problem));
    }

    /// The value of `result`, or `None` with its problems recorded.
    pub fn ok<T, E: Into<Problems>>(&mut self, result: Result<T, E>) -> Option<T> {
        match result {
            Ok(value) => Some(value),
            Err(e) => {
                self.extend(e.into());
                None
            }
        }
    }

    /// Records all of `other`.
    pub fn extend(&mut self, other: Problems) {
        self.0.extend(other.0);
    }

    /// The same problems, their keys below `prefix`.
    #[must_use]
    pub fn under(self, prefix: &str) -> Self {
        Self(self.0.into_iter().map(|p| p.under(prefix)).collect())
    }

    /// Whether nothing was found.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// How many were found.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// The problems, in the order found.
    pub fn iter(&self) -> std::slice::Iter<'_, ConfigProblem> {
        self.0.iter()
    }

    /// `Ok(value())` when nothing was found, else every problem.
    pub fn finish<T>(self, value: impl FnOnce() -> T) -> Result<T, Problems> {
        if self.0.is_empty() { Ok(value()) } else { Err(self) }
    }
}

impl From<ConfigProblem> for Problems {
    fn from(problem: ConfigProblem) -> Self {
        Self(vec![problem])
    }
}

impl IntoIterator for Problems {
    type Item = ConfigProblem;
    type IntoIter = std::vec::IntoIter<ConfigProblem>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter()
    }
}

impl FromIterator<ConfigProblem> for Problems {
    fn from_iter<I: IntoIterator<Item = ConfigProblem>>(iter: I) -> Self {
        Self(iter.into_iter().collect())
    }
}

/// One problem per line.
impl fmt::Display for Problems {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, p) in self.0.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{p}")?;
        }
        Ok(())
    }
}

impl std::error::Error for Problems {}

/// The candidate nearest to `word`, when near enough to be a typo (or a missing plural): the
/// "did you mean" of every unknown key and value.
pub fn closest<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    candidates
        .into_iter()
        .map(|c| (strsim::jaro_winkler(word, c), c))
        .filter(|(score, _)| *score >= 0.85)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, c)| c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn problems_nest_under_a_prefix() {
        let p = ConfigProblem::new("path", "bad").under("tools.t");
        assert_eq!(p.to_string(), "tools.t.path: bad");
        assert_eq!(ConfigProblem::new("", "bad").under("auth").key, "auth");
        assert_eq!(ConfigProblem::new("k", "bad").under("").key, "k");
    }

    #[test]
    fn problems_collect_past_the_first() {
        let mut all = Problems::new();
        assert_eq!(all.ok(Ok::<_, ConfigProblem>(1)), Some(1));
        assert_eq!(all.ok(Err::<u8, _>(ConfigProblem::new("a", "one"))), None);
        all.add("b", "two");
        let all = all.under("adapters.x");
        assert_eq!(all.to_string(), "adapters.x.a: one\nadapters.x.b: two");
        assert!(all.finish(|| ()).is_err());
        assert_eq!(Problems::new().finish(|| 5), Ok(5));
    }

    #[test]
    fn near_misses_are_suggested() {
        assert_eq!(closest("stdn", ["stdin", "args", "env"]), Some("stdin"));
        assert_eq!(closest("zzz", ["stdin", "args"]), None);
    }
}
