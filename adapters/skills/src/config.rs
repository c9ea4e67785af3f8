//! `[[adapters]] kind = "skills"`: where the skills are and how often to look for changes.

use schemars::JsonSchema;
use serde::Deserialize;

/// `[[adapters]] kind = "skills"`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SkillsConfig {
    /// The folder of skills: each directory below it holding a `SKILL.md` is one skill,
    /// served at `skill://<its path below the folder>/` (relative: to the config file's folder).
    pub root: String,
    /// How often the folder is checked for changes, in milliseconds (file names, sizes and
    /// modification times; a change is scanned and served without a restart). 0: never.
    #[serde(default = "default_poll_interval_ms")]
    pub poll_interval_ms: u64,
}

fn default_poll_interval_ms() -> u64 {
    1000
}
