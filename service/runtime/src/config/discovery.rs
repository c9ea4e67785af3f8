//! `[discovery]`: how clients find the tools. `mode = "list"` (the default) lists every tool;
//! `mode = "search"` lists three tools instead (search, describe, call) over a search index of
//! the whole catalog ([`crate::registry::search`]), for catalogs too large for a model's
//! context.

use schemars::JsonSchema;
use serde::Deserialize;

use super::ConfigError;

/// Most results a search returns, whatever `limit` asks.
pub const MAX_RESULTS: usize = 50;

/// `[discovery]` as written.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct RawDiscovery {
    /// `"list"` (default): `tools/list` lists every tool. `"search"`: it lists `search_tools`,
    /// `describe_tools` and `call_tool`, which find, describe and run any tool of the catalog.
    pub mode: String,
    /// Results `search_tools` returns when the caller names no `limit` (1-50, default 10).
    pub results: usize,
}

impl Default for RawDiscovery {
    fn default() -> Self {
        Self { mode: "list".into(), results: 10 }
    }
}

/// `[discovery]`, validated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Discovery {
    /// Every tool listed.
    #[default]
    List,
    /// Three tools listed over a search index; `results` by default per search.
    Search {
        /// Default result count.
        results: usize,
    },
}

/// Validates `[discovery]`: every problem of the section, not the first.
pub(super) fn discovery(raw: &RawDiscovery) -> Result<Discovery, ConfigError> {
    let mut problems = mcp_adapter_api::Problems::new();
    if !(1..=MAX_RESULTS).contains(&raw.results) {
        problems.add(
            "discovery.results",
            format!("{} is out of range: a search returns 1 to {MAX_RESULTS} results", raw.results),
        );
    }
    let mode = match raw.mode.as_str() {
        "list" => Some(Discovery::List),
        "search" => Some(Discovery::Search { results: raw.results }),
        other => {
            problems.add(
                "discovery.mode",
                format!(
                    "unknown mode '{other}': use \"list\" (every tool listed) or \"search\" (search, describe and call tools)"
                ),
            );
            None
        }
    };
    match mode {
        Some(mode) if problems.is_empty() => Ok(mode),
        _ => Err(ConfigError::Invalid(problems)),
    }
}
