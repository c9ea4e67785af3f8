//! The walk of the root, confined to it: every directory and regular file beneath the root,
//! with what decides whether it changed. A symbolic link is followed only when what it points
//! at is beneath the root (as the CLI adapter's paths: a link out of the root is refused);
//! names starting with `.` are not served; a directory reached twice (a link cycle) is walked
//! once. What is left out is said, one line each, for the log and `mcp-runtime check`.

use std::collections::{BTreeMap, HashSet};
use std::os::unix::fs::MetadataExt as _;
use std::path::{Path, PathBuf};

/// Deepest directory walked below the root.
const MAX_DEPTH: usize = 32;

/// What the walk found. Paths are `/`-joined names relative to the root (`""` is the root).
#[derive(Debug, Default)]
pub struct Tree {
    /// Every directory walked, with its children's names (directories and files).
    pub dirs: BTreeMap<String, Vec<String>>,
    /// Every regular file: where it really is (links resolved) and its stamp.
    pub files: BTreeMap<String, Found>,
    /// What was left out and why (`<relative path>: <why>`).
    pub problems: Vec<String>,
}

/// A regular file beneath the root.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Found {
    /// Canonical path (beneath the canonical root).
    pub path: PathBuf,
    /// Length in bytes.
    pub len: u64,
    /// Modification time (ns) and inode: a change to either is a change to the file.
    pub stamp: (i64, i64, u64),
}

/// Walks `root` (canonical). `Err` only when the root itself cannot be read.
pub fn walk(root: &Path) -> std::io::Result<Tree> {
    let mut tree = Tree::default();
    let mut seen = HashSet::from([root.to_path_buf()]);
    std::fs::read_dir(root)?;
    dir(root, root, "", 0, &mut seen, &mut tree);
    Ok(tree)
}

fn join(rel: &str, name: &str) -> String {
    if rel.is_empty() { name.to_owned() } else { format!("{rel}/{name}") }
}

fn dir(root: &Path, at: &Path, rel: &str, depth: usize, seen: &mut HashSet<PathBuf>, tree: &mut Tree) {
    let mut children = Vec::new();
    let entries = match std::fs::read_dir(at) {
        Ok(e) => e,
        Err(e) => {
            tree.problems.push(format!("{}: cannot be read ({e}); left out", shown(rel)));
            tree.dirs.insert(rel.to_owned(), children);
            return;
        }
    };
    let mut names: Vec<_> = entries.filter_map(Result::ok).map(|e| e.file_name()).collect();
    names.sort();
    for os_name in names {
        let Some(name) = os_name.to_str().map(str::to_owned) else {
            tree.problems.push(format!("{}: a name that is not UTF-8 ({os_name:?}); left out", shown(rel)));
            continue;
        };
        if name.starts_with('.') {
            continue;
        }
        let child_rel = join(rel, &name);
        let path = at.join(&name);
        let Ok(meta) = std::fs::symlink_metadata(&path) else { continue };
        let (real, meta) = if meta.file_type().is_symlink() {
            match std::fs::canonicalize(&path) {
                Ok(target) if target.starts_with(root) => match std::fs::metadata(&target) {
                    Ok(m) => (target, m),
                    Err(_) => continue,
                },
                Ok(_) => {
                    tree.problems.push(format!("{child_rel}: a symbolic link out of the root; refused"));
                    continue;
                }
                Err(_) => {
                    tree.problems.push(format!("{child_rel}: a symbolic link to nothing; left out"));
                    continue;
                }
            }
        } else {
            (path, meta)
        };
        if meta.is_dir() {
            if depth + 1 > MAX_DEPTH {
                tree.problems.push(format!("{child_rel}: deeper than {MAX_DEPTH} directories; left out"));
            } else if !seen.insert(real.clone()) {
                tree.problems.push(format!("{child_rel}: a directory reached twice (a link cycle); walked once"));
            } else {
                dir(root, &real, &child_rel, depth + 1, seen, tree);
                children.push(name);
            }
        } else if meta.is_file() {
            let stamp = (meta.mtime(), meta.mtime_nsec(), meta.ino());
            tree.files.insert(child_rel, Found { path: real, len: meta.len(), stamp });
            children.push(name);
        } else {
            tree.problems.push(format!("{child_rel}: not a regular file or directory; left out"));
        }
    }
    tree.dirs.insert(rel.to_owned(), children);
}

/// A relative path for messages (`.` for the root).
pub fn shown(rel: &str) -> &str {
    if rel.is_empty() { "." } else { rel }
}

impl Tree {
    /// A hash of everything that decides the served skills: names, kinds, lengths, stamps.
    pub fn fingerprint(&self) -> u64 {
        use std::hash::{Hash as _, Hasher as _};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        self.dirs.hash(&mut h);
        self.files.hash(&mut h);
        h.finish()
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::symlink;

    use super::*;

    #[test]
    fn links_out_of_the_root_are_refused_and_those_inside_followed() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path().join("root");
        std::fs::create_dir_all(root.join("a/sub")).unwrap();
        std::fs::create_dir(t.path().join("outside")).unwrap();
        std::fs::write(t.path().join("outside/secret"), "s").unwrap();
        std::fs::write(root.join("a/sub/file.md"), "x").unwrap();
        std::fs::write(root.join("a/.hidden"), "h").unwrap();
        symlink("../../outside/secret", root.join("a/leak")).unwrap();
        symlink(t.path().join("outside"), root.join("a/out")).unwrap();
        symlink("sub/file.md", root.join("a/alias.md")).unwrap();
        symlink("..", root.join("a/sub/up")).unwrap();
        let root = std::fs::canonicalize(&root).unwrap();
        let tree = walk(&root).unwrap();
        let files: Vec<&str> = tree.files.keys().map(String::as_str).collect();
        assert_eq!(files, ["a/alias.md", "a/sub/file.md"]);
        assert_eq!(tree.files["a/alias.md"].path, root.join("a/sub/file.md"));
        let problems = tree.problems.join("\n");
        assert!(problems.contains("a/leak: a symbolic link out of the root; refused"), "{problems}");
        assert!(problems.contains("a/out: a symbolic link out of the root; refused"), "{problems}");
        assert!(problems.contains("a/sub/up: a directory reached twice"), "{problems}");
        assert_eq!(tree.dirs["a"], ["alias.md", "sub"]);
    }
}
