//! The Skills extension (`io.modelcontextprotocol/skills`, SEP-2640): skill entries, the
//! method names it adds and the directory MIME type (ext-skills specification/stable/skills.mdx
//! § Skill Entries, § Reading Directories).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Extension id, declared under `capabilities.extensions` (SEP-2640 § Capability Negotiation).
pub const SKILLS_EXTENSION: &str = "io.modelcontextprotocol/skills";
/// Enumerates the skills a server serves (SEP-2640 § Listing Skills).
pub const SKILLS_LIST: &str = "skills/list";
/// One skill's entry by the URI of its `SKILL.md` (SEP-2640 § Getting a Skill).
pub const SKILLS_GET: &str = "skills/get";
/// The direct children of a directory resource (SEP-2640 § Reading Directories).
pub const DIRECTORY_READ: &str = "resources/directory/read";
/// The `mimeType` of a directory resource (SEP-2640 § Directory Resources).
pub const DIRECTORY_MIME_TYPE: &str = "inode/directory";
/// The URI scheme servers SHOULD use (SEP-2640 § Resource Mapping).
pub const SCHEME: &str = "skill://";
/// A skill's manifest file name.
pub const MANIFEST: &str = "SKILL.md";
/// Resources per skill a server SHOULD NOT exceed, `SKILL.md` included (SEP-2640 § Limits).
pub const MAX_FILES: usize = 512;
/// Total bytes per skill a server SHOULD NOT exceed (SEP-2640 § Limits).
pub const MAX_BYTES: u64 = 16 * 1024 * 1024;

/// A `Skill` entry, the same in `skills/list` and `skills/get`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Skill {
    /// Resource URI of the skill's `SKILL.md`.
    pub uri: String,
    /// The `SKILL.md` YAML frontmatter rendered verbatim as JSON (`name` and `description`
    /// always present).
    pub frontmatter: Map<String, Value>,
    /// Every file of the skill, `SKILL.md` included, each once.
    pub resources: Vec<SkillResource>,
}

/// One file of a skill: its URI, the SHA-256 of its raw bytes and their length.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SkillResource {
    /// Resource URI of the file.
    pub uri: String,
    /// `sha256:` and 64 lowercase hexadecimal characters.
    pub digest: String,
    /// Length in bytes of the content the digest covers.
    pub size: u64,
}

impl Skill {
    /// The skill's root directory: its URI without `/SKILL.md` (SEP-2640 § Resource Mapping).
    pub fn root(&self) -> &str {
        self.uri.strip_suffix("/SKILL.md").unwrap_or(&self.uri)
    }

    /// `frontmatter.name` (empty when missing: entries are built from validated files).
    pub fn name(&self) -> &str {
        self.frontmatter.get("name").and_then(Value::as_str).unwrap_or_default()
    }

    /// `frontmatter.description`.
    pub fn description(&self) -> &str {
        self.frontmatter.get("description").and_then(Value::as_str).unwrap_or_default()
    }
}
