//! The skills of every adapter serving the extension (`io.modelcontextprotocol/skills`,
//! SEP-2640): `skills/list` pages, each skill's `skills/get` answer and each directory's
//! `resources/directory/read` answer, rendered once per registry; and which adapter reads
//! each skill file. Skill URIs are unique across adapters, as resource URIs are.

use std::collections::HashMap;
use std::sync::Arc;

use mcp_adapter_api::{Adapter, Problems, Skills};
use mcp_protocol::CacheHint;
use mcp_protocol::skills::Skill;
use serde::Serialize;
use serde_json::value::RawValue;

use super::pages::Pages;
use super::pages::page_renderer;
use crate::config::Caching;
use crate::rpc::response::{ResultObject, ResultType, ServerInfo, prerender};

/// The skills index of one registry.
pub struct SkillIndex {
    /// Some adapter serves the extension (declared even while it has no skill).
    pub declared: bool,
    pages: Pages,
    entries: HashMap<String, Box<RawValue>>,
    directories: HashMap<String, Box<RawValue>>,
    files: HashMap<String, Arc<dyn Adapter>>,
}

impl std::fmt::Debug for SkillIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SkillIndex").field("skills", &self.entries.len()).field("files", &self.files.len()).finish()
    }
}

#[derive(Serialize)]
struct GetSkill<'a> {
    skill: &'a Skill,
    #[serde(flatten)]
    hint: CacheHint,
}

#[derive(Serialize)]
struct DirectoryPage<'a> {
    resources: &'a [mcp_protocol::Resource],
    #[serde(flatten)]
    hint: CacheHint,
}

impl SkillIndex {
    /// Indexes `sources` (adapter name, its skills, the adapter), in file order; a skill URI
    /// served by two adapters is a problem naming both.
    pub fn build(
        sources: &[(&str, Skills, Arc<dyn Adapter>)],
        caching: &Caching,
        info: &ServerInfo,
        page_size: usize,
        problems: &mut Problems,
    ) -> Self {
        let mut owner: HashMap<&str, &str> = HashMap::new();
        let mut listed: Vec<&Skill> = Vec::new();
        let mut entries = HashMap::new();
        let mut directories = HashMap::new();
        let mut files = HashMap::new();
        for (name, skills, adapter) in sources {
            for skill in &skills.entries {
                if let Some(prev) = owner.insert(&skill.uri, name) {
                    problems.add(
                        format!("adapters.{name}"),
                        format!("skill '{}' is also served by adapter '{prev}'; skill URIs must be unique", skill.uri),
                    );
                    continue;
                }
                let body = GetSkill { skill, hint: caching.skills_get };
                entries.insert(skill.uri.clone(), prerender(&ResultObject::new(ResultType::Complete, &body, info)));
                for r in &skill.resources {
                    files.entry(r.uri.clone()).or_insert_with(|| Arc::clone(adapter));
                }
                listed.push(skill);
            }
            for d in &skills.directories {
                let body = DirectoryPage { resources: &d.children, hint: caching.skills_list };
                directories
                    .entry(d.uri.clone())
                    .or_insert_with(|| prerender(&ResultObject::new(ResultType::Complete, &body, info)));
            }
        }
        // An entry is atomic: pages split between entries, never inside one (SEP-2640 § Listing Skills).
        let pages = Pages::build(
            &listed,
            listed.iter().map(|s| s.uri.as_str()),
            page_size,
            page_renderer("skills", caching.skills_list, info),
        );
        let declared = !sources.is_empty();
        Self { declared, pages, entries, directories, files }
    }

    /// A page of `skills/list`.
    pub fn page(&self, cursor: Option<&str>) -> Result<&RawValue, crate::rpc::RpcError> {
        self.pages.page(cursor)
    }

    /// The rendered `skills/get` result for the skill whose `SKILL.md` is `uri`.
    pub fn entry(&self, uri: &str) -> Option<&RawValue> {
        self.entries.get(uri).map(AsRef::as_ref)
    }

    /// The rendered `resources/directory/read` result of the directory `uri`.
    pub fn directory(&self, uri: &str) -> Option<&RawValue> {
        self.directories.get(uri).map(AsRef::as_ref)
    }

    /// The adapter reading the skill file `uri`.
    pub fn file(&self, uri: &str) -> Option<&Arc<dyn Adapter>> {
        self.files.get(uri)
    }
}
