//! One scan of the root into the skills it serves: every directory holding a `SKILL.md` is a
//! skill (nested ones too, SEP-2640 § Nested Skills), published at `skill://<its path>/`,
//! with a complete manifest of its files (`sha256:` digest and size of the bytes served) and
//! its directories for `resources/directory/read`. A skill with a problem (a bad `SKILL.md`,
//! a name that is not its directory's, a path that cannot be a URI, over the limits) is left
//! out with a line naming the file and the fix; the rest are served.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use mcp_adapter_api::protocol::Resource;
use mcp_adapter_api::protocol::skills::{
    DIRECTORY_MIME_TYPE, MANIFEST, MAX_BYTES, MAX_FILES, SCHEME, Skill, SkillResource,
};
use mcp_adapter_api::{Directory, Skills};

use crate::walk::{Found, Tree, shown};
use crate::{frontmatter, mime};

/// A file as served: where it is and what the manifest says of it.
#[derive(Debug, Clone)]
pub struct File {
    /// Canonical path beneath the root.
    pub path: PathBuf,
    /// `sha256:<hex>` of its bytes.
    pub digest: String,
    /// Their length.
    pub size: u64,
    /// Its `mimeType`.
    pub mime: &'static str,
    /// What decided the digest (reused while unchanged).
    stamp: (i64, i64, u64),
}

/// What one scan serves.
#[derive(Debug, Default)]
pub struct Snapshot {
    /// The entries and directories.
    pub skills: Skills,
    /// Each skill's `SKILL.md` as a listed resource (name and description from its frontmatter).
    pub manifests: Vec<Resource>,
    /// Every served file by URI.
    pub files: HashMap<String, File>,
    /// What was left out and why, one line each.
    pub problems: Vec<String>,
    /// The walk's fingerprint: equal fingerprints, nothing to scan again.
    pub fingerprint: u64,
}

/// Builds the snapshot of `tree` (walked from `root`), reusing `previous` digests of files
/// whose stamp did not change.
pub fn snapshot(tree: Tree, previous: Option<&Snapshot>) -> Snapshot {
    let fingerprint = tree.fingerprint();
    let mut out = Snapshot { fingerprint, problems: tree.problems.clone(), ..Snapshot::default() };
    let known: HashMap<&Path, &File> =
        previous.map(|p| p.files.values().map(|f| (f.path.as_path(), f)).collect()).unwrap_or_default();
    let mut digested: HashMap<String, File> = HashMap::new();
    let mut directories: BTreeMap<String, Directory> = BTreeMap::new();
    for (dir, children) in &tree.dirs {
        if !children.iter().any(|c| c == MANIFEST) || !tree.files.contains_key(&join(dir, MANIFEST)) {
            continue;
        }
        match skill(&tree, dir, &known, &mut digested) {
            Ok((entry, manifest, rels)) => {
                for sub in tree.dirs.keys().filter(|d| *d == dir || d.starts_with(&format!("{dir}/"))) {
                    directories.entry(uri(sub)).or_insert_with(|| directory(&tree, sub, &digested));
                }
                for rel in rels {
                    out.files.insert(uri(&rel), digested[&rel].clone());
                }
                out.manifests.push(manifest);
                out.skills.entries.push(entry);
            }
            Err(problem) => out.problems.push(problem),
        }
    }
    out.skills.directories = directories.into_values().collect();
    out
}

fn join(dir: &str, name: &str) -> String {
    if dir.is_empty() { name.to_owned() } else { format!("{dir}/{name}") }
}

/// The skill at `dir`, or why it is not served.
fn skill(
    tree: &Tree,
    dir: &str,
    known: &HashMap<&Path, &File>,
    digested: &mut HashMap<String, File>,
) -> Result<(Skill, Resource, Vec<String>), String> {
    let manifest = join(dir, MANIFEST);
    if dir.is_empty() {
        return Err(format!(
            "{manifest}: a SKILL.md at the root is not served: put each skill in a directory named like it"
        ));
    }
    if let Some(bad) = dir.split('/').find(|s| !uri_segment(s)) {
        return Err(format!(
            "{manifest}: the directory name `{bad}` cannot be part of a skill URI: use letters, digits, `-`, `_`, `.` and `~`"
        ));
    }
    let name = dir.rsplit('/').next().unwrap_or(dir);
    let bytes = std::fs::read(&tree.files[&manifest].path).map_err(|e| format!("{manifest}: cannot be read: {e}"))?;
    let text = String::from_utf8(bytes).map_err(|_| format!("{manifest}: not UTF-8 text"))?;
    let fm = frontmatter::parse(&text).map_err(|e| format!("{manifest}: {e}"))?;
    let declared = fm.get("name").and_then(|n| n.as_str()).unwrap_or_default();
    if declared != name {
        return Err(format!(
            "{manifest}: `name: {declared}` must equal the skill's directory name `{name}` (rename one of them)"
        ));
    }
    let prefix = format!("{dir}/");
    let mut rels: Vec<String> = tree.files.keys().filter(|f| f.starts_with(&prefix)).cloned().collect();
    // SKILL.md first, then the rest in path order.
    rels.sort_by_key(|r| (*r != manifest, r.clone()));
    if rels.len() > MAX_FILES {
        return Err(format!(
            "{}: {} files, over the {MAX_FILES} a host must accept: split the skill",
            shown(dir),
            rels.len()
        ));
    }
    let mut resources = Vec::with_capacity(rels.len());
    let mut total = 0;
    for rel in &rels {
        let file = match digested.get(rel) {
            Some(f) => f.clone(),
            None => {
                let f = digest(rel, &tree.files[rel], known).map_err(|e| format!("{rel}: cannot be read: {e}"))?;
                digested.insert(rel.clone(), f.clone());
                f
            }
        };
        total += file.size;
        resources.push(SkillResource { uri: uri(rel), digest: file.digest, size: file.size });
    }
    if total > MAX_BYTES {
        return Err(format!("{}: {total} bytes, over the 16 MiB a host must accept: split the skill", shown(dir)));
    }
    let description = fm.get("description").and_then(|d| d.as_str()).map(str::to_owned);
    let entry = Skill { uri: uri(&manifest), frontmatter: fm, resources };
    let listed = Resource {
        uri: entry.uri.clone(),
        name: name.to_owned(),
        title: None,
        description,
        mime_type: Some("text/markdown".to_owned()),
        size: Some(entry.resources[0].size),
    };
    Ok((entry, listed, rels))
}

/// The digest of a file: `known`'s when its stamp is the same, else read and hashed now.
fn digest(rel: &str, found: &Found, known: &HashMap<&Path, &File>) -> std::io::Result<File> {
    if let Some(f) = known.get(found.path.as_path()).filter(|f| f.stamp == found.stamp && f.size == found.len) {
        return Ok((*f).clone());
    }
    let bytes = std::fs::read(&found.path)?;
    let text = std::str::from_utf8(&bytes).is_ok();
    let name = rel.rsplit('/').next().unwrap_or(rel);
    Ok(File {
        path: found.path.clone(),
        digest: sha256(&bytes),
        size: bytes.len() as u64,
        mime: if name == MANIFEST { "text/markdown" } else { mime::of(name, text) },
        stamp: found.stamp,
    })
}

/// `sha256:` and the lowercase hex of the SHA-256 of `bytes` (SEP-2640 § Integrity and Verification).
pub fn sha256(bytes: &[u8]) -> String {
    let d = ring::digest::digest(&ring::digest::SHA256, bytes);
    let mut out = String::with_capacity(7 + 64);
    out.push_str("sha256:");
    for b in d.as_ref() {
        out.push_str(&format!("{b:02x}"));
    }
    out
}

/// A directory's listing: files with their metadata, subdirectories as directory resources.
fn directory(tree: &Tree, rel: &str, files: &HashMap<String, File>) -> Directory {
    let children = tree.dirs[rel]
        .iter()
        .map(|name| {
            let child = join(rel, name);
            let is_dir = tree.dirs.contains_key(&child);
            let file = files.get(&child);
            Resource {
                uri: uri(&child),
                name: name.clone(),
                title: None,
                description: None,
                mime_type: Some(
                    if is_dir { DIRECTORY_MIME_TYPE } else { file.map_or("text/plain", |f| f.mime) }.to_owned(),
                ),
                size: file.map(|f| f.size),
            }
        })
        .collect();
    Directory { uri: uri(rel), children }
}

/// A directory name usable as a skill-path segment as it is (RFC 3986 unreserved characters).
fn uri_segment(s: &str) -> bool {
    !s.is_empty() && s != "." && s != ".." && s.bytes().all(unreserved)
}

fn unreserved(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"-._~".contains(&b)
}

/// `skill://` and the relative path, each byte outside the unreserved set percent-encoded
/// (file names are the author's; `/` stays the separator).
pub fn uri(rel: &str) -> String {
    let mut out = String::from(SCHEME);
    for b in rel.bytes() {
        if unreserved(b) || b == b'/' {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The relative path a URI's path encodes (the inverse of [`uri`]); invalid escapes stay.
pub fn decode(encoded: &str) -> String {
    percent_encoding::percent_decode_str(encoded).decode_utf8_lossy().into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(root: &Path, rel: &str, text: &str) {
        let path = root.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    fn scan(root: &Path) -> Snapshot {
        snapshot(crate::walk::walk(&std::fs::canonicalize(root).unwrap()).unwrap(), None)
    }

    #[test]
    fn nested_skills_are_published_flat_and_the_outer_manifest_lists_their_files() {
        let t = tempfile::tempdir().unwrap();
        let md = |name: &str| format!("---\nname: {name}\ndescription: d\n---\n");
        write(t.path(), "outer/SKILL.md", &md("outer"));
        write(t.path(), "outer/my notes.md", "n");
        write(t.path(), "outer/inner/SKILL.md", &md("inner"));
        write(t.path(), "stray.md", "not in a skill");
        let s = scan(t.path());
        let uris: Vec<&str> = s.skills.entries.iter().map(|e| e.uri.as_str()).collect();
        assert_eq!(uris, ["skill://outer/SKILL.md", "skill://outer/inner/SKILL.md"]);
        let outer: Vec<&str> = s.skills.entries[0].resources.iter().map(|r| r.uri.as_str()).collect();
        assert_eq!(outer, ["skill://outer/SKILL.md", "skill://outer/inner/SKILL.md", "skill://outer/my%20notes.md"]);
        assert!(s.files.contains_key("skill://outer/my%20notes.md") && !s.files.keys().any(|k| k.contains("stray")));
        assert_eq!(decode("outer/my%20notes.md"), "outer/my notes.md");
        let dirs: Vec<&str> = s.skills.directories.iter().map(|d| d.uri.as_str()).collect();
        assert_eq!(dirs, ["skill://outer", "skill://outer/inner"]);
        assert_eq!(s.skills.directories[0].children[0].mime_type.as_deref(), Some("text/markdown"));
        assert_eq!(s.skills.directories[0].children[1].mime_type.as_deref(), Some(DIRECTORY_MIME_TYPE));
        assert_eq!(s.manifests[1].name, "inner");
    }

    #[test]
    fn a_skill_with_a_problem_is_left_out_and_named() {
        let t = tempfile::tempdir().unwrap();
        write(t.path(), "SKILL.md", "---\nname: root\ndescription: d\n---\n");
        write(t.path(), "a b/SKILL.md", "---\nname: a-b\ndescription: d\n---\n");
        write(t.path(), "good/SKILL.md", "---\nname: good\ndescription: d\n---\n");
        let s = scan(t.path());
        assert_eq!(s.skills.entries.len(), 1);
        let problems = s.problems.join("\n");
        assert!(problems.contains("SKILL.md: a SKILL.md at the root is not served"), "{problems}");
        assert!(
            problems.contains("a b/SKILL.md: the directory name `a b` cannot be part of a skill URI"),
            "{problems}"
        );
    }
}
