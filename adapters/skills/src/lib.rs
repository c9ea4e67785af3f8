//! Skills served from a folder: the `io.modelcontextprotocol/skills` extension (SEP-2640,
//! modelcontextprotocol.io/extensions/skills/overview). Each directory below `root` holding a
//! `SKILL.md` is a skill at `skill://<its path>/SKILL.md`; its files are resources read
//! through `resources/read`, listed in its entry with their `sha256:` digests and sizes; its
//! directories answer `resources/directory/read`. The runtime serves `skills/list`,
//! `skills/get` and the directories from [`Catalog::skills`]; this crate reads the files.
//!
//! Confined to the root: only files a scan found beneath it are ever served (a client's URI
//! never becomes a path), links out of it are refused, and a read serves only the bytes the
//! manifest describes.
//!
//! - [`config`]: what the config file says.
//! - `walk`: the confined walk of the root.
//! - `frontmatter`: `SKILL.md`'s YAML frontmatter as JSON, and the naming rules.
//! - `scan`: skills, manifests and directories from one walk.
//! - `read`: one file read and checked against its manifest entry.
//! - `watch`: the served snapshot, the poll, and what a change announces.
//! - `mime`: a file's `mimeType`.

pub mod config;
mod frontmatter;
mod mime;
mod read;
mod scan;
mod walk;
mod watch;

use std::sync::Arc;
use std::time::Duration;

use base64::Engine as _;
use mcp_adapter_api::protocol::content::ResourceContents;
use mcp_adapter_api::protocol::{CallToolResult, ReadResourceResult};
use mcp_adapter_api::{
    Adapter, AdapterError, Build, BuildContext, CallContext, Catalog, ConfigProblem, Outcome, Problems, ResourceRead,
    ToolCall, async_trait,
};

pub use config::SkillsConfig;
use read::Refused;
use watch::Shared;

/// The skills adapter: one folder of skills.
#[derive(Debug)]
pub struct SkillTree {
    shared: Arc<Shared>,
    poll: Option<tokio::task::AbortHandle>,
}

impl Drop for SkillTree {
    fn drop(&mut self) {
        if let Some(p) = &self.poll {
            p.abort();
        }
    }
}

impl Build for SkillTree {
    type Config = SkillsConfig;

    /// Scans `root` now: a root that is missing or not a directory is a problem of the
    /// config; a skill with a problem is left out with a warning naming its file (and listed
    /// by `mcp-runtime check`), and the rest are served. Offline, only the key is checked.
    fn build(config: &SkillsConfig, cx: &BuildContext) -> Result<Self, Problems> {
        if config.root.trim().is_empty() {
            return Err(ConfigProblem::new("root", "must name the folder of skills").into());
        }
        let path = cx.env.path(&config.root);
        if cx.env.is_offline() {
            let shared = Shared::new(
                cx.name.clone(),
                path,
                scan::Snapshot::default(),
                cx.changes.clone(),
                cx.catalog_changed.clone(),
            );
            return Ok(Self { shared: Arc::new(shared), poll: None });
        }
        let root = match std::fs::canonicalize(&path) {
            Ok(root) if root.is_dir() => root,
            Ok(_) => return Err(ConfigProblem::new("root", format!("{} is not a directory", path.display())).into()),
            Err(e) => {
                return Err(ConfigProblem::new("root", format!("{} cannot be read: {e}", path.display()))
                    .help("create the folder, or give the path of an existing one (relative paths start at the config file's folder)")
                    .into());
            }
        };
        let tree = walk::walk(&root).map_err(|e| {
            Problems::from(ConfigProblem::new("root", format!("{} cannot be read: {e}", root.display())))
        })?;
        let first = scan::snapshot(tree, None);
        for problem in &first.problems {
            tracing::warn!(adapter = %cx.name, problem = %problem, "skill file left out");
        }
        let shared =
            Arc::new(Shared::new(cx.name.clone(), root, first, cx.changes.clone(), cx.catalog_changed.clone()));
        let poll = (config.poll_interval_ms > 0)
            .then(|| watch::poll(&shared, Duration::from_millis(config.poll_interval_ms)))
            .flatten();
        Ok(Self { shared, poll })
    }
}

#[async_trait]
impl Adapter for SkillTree {
    fn catalog(&self) -> Catalog {
        let view = self.shared.view.load();
        Catalog { resources: view.manifests.clone(), skills: Some(view.skills.clone()), ..Catalog::default() }
    }

    fn report(&self) -> Option<String> {
        let view = self.shared.view.load();
        let mut out = format!(
            "{} skills, {} files, {} directories under {}",
            view.skills.entries.len(),
            view.files.len(),
            view.skills.directories.len(),
            self.shared.root.display()
        );
        for p in &view.problems {
            out.push_str(&format!("\n  left out: {p}"));
        }
        Some(out)
    }

    async fn call_tool(&self, call: ToolCall<'_>, _cx: &CallContext) -> Result<Outcome<CallToolResult>, AdapterError> {
        Err(AdapterError::UnknownTool(call.name.to_owned()))
    }

    async fn read_resource(
        &self,
        read: ResourceRead<'_>,
        _cx: &CallContext,
    ) -> Result<Outcome<ReadResourceResult>, AdapterError> {
        // A file changed since the scan is scanned again once, then served as now listed.
        for attempt in 0..2 {
            let view = self.shared.view.load_full();
            let Some(file) = view.files.get(read.uri).or_else(|| view.files.get(&normalized(read.uri))).cloned() else {
                return Err(AdapterError::ResourceNotFound(read.uri.to_owned()));
            };
            let root = self.shared.root.clone();
            let file2 = file.clone();
            let bytes = tokio::task::spawn_blocking(move || read::read(&root, &file2))
                .await
                .map_err(|e| AdapterError::Internal(e.to_string()))?;
            match bytes {
                Ok(bytes) => return Ok(Outcome::Complete(contents(read.uri, &file, bytes))),
                Err(Refused::Changed) if attempt == 0 => self.shared.rescan().await,
                Err(Refused::Changed) => {
                    return Err(AdapterError::Backend(format!(
                        "{} is changing on disk; read it again after skills/get",
                        read.uri
                    )));
                }
                Err(Refused::Gone(why)) => {
                    tracing::warn!(adapter = %self.shared.name, uri = read.uri, error = %why, "skill file refused at read");
                    self.shared.rescan().await;
                    return Err(AdapterError::ResourceNotFound(read.uri.to_owned()));
                }
            }
        }
        Err(AdapterError::ResourceNotFound(read.uri.to_owned()))
    }
}

/// The URI as this adapter spells it (percent-escapes decoded, then encoded its way).
fn normalized(uri: &str) -> String {
    uri.strip_prefix(mcp_adapter_api::protocol::skills::SCHEME)
        .map_or_else(|| uri.to_owned(), |rest| scan::uri(&scan::decode(rest)))
}

/// UTF-8 files as text, others as a base64 blob: the same bytes either way.
fn contents(uri: &str, file: &scan::File, bytes: Vec<u8>) -> ReadResourceResult {
    let c = match String::from_utf8(bytes) {
        Ok(text) => ResourceContents::text(uri, Some(file.mime), text),
        Err(e) => {
            ResourceContents::blob(uri, Some(file.mime), base64::engine::general_purpose::STANDARD.encode(e.as_bytes()))
        }
    };
    ReadResourceResult { contents: vec![c] }
}
