//! Path arguments kept inside their roots (`paths.<argument> = { allowed_roots = [...] }`).
//!
//! A value is checked and opened before the program starts: `..` and absolute paths outside
//! the roots are refused by their text, then the rest is opened beneath its root with
//! [`crate::beneath`] (no symbolic link may lead out). The program never gets the caller's
//! text: it gets the opened object, inherited as descriptor `3 + i`, and the argv entry names
//! it as `/proc/self/fd/<3 + i>` ([`handle_path`]). Whatever is renamed, replaced or swapped
//! for a symbolic link between the check and the program's own `open` changes nothing: the
//! descriptor is the object that was checked (no check-then-use race).
//!
//! Refusals are tool errors (`isError`, so a model can correct its path): they name the
//! argument, repeat the caller's own text and the allowed roots, and never say more of the
//! file system (not where a link pointed, nor whether something outside exists).

use std::collections::BTreeMap;
use std::os::fd::{AsFd as _, OwnedFd};
use std::path::{Component, Path, PathBuf};

use rustix::fs::{FileType, fstat};
use serde_json::Value;

use crate::beneath::{self, Method, Refusal};
use crate::config::{PathArg, PathKind};

/// Descriptor number of the first opened path in the program.
pub const FIRST_FD: i32 = 3;

/// Most path values one call may open (each is a descriptor the program inherits).
pub const MAX_PATHS: usize = 256;

/// The argv text that names descriptor `fd` in the program: the kernel's per-process view,
/// which reopens exactly that object.
pub fn handle_path(fd: i32) -> String {
    if cfg!(any(target_os = "linux", target_os = "android")) {
        format!("/proc/self/fd/{fd}")
    } else {
        format!("/dev/fd/{fd}")
    }
}

/// The path arguments of one tool, validated at load.
#[derive(Debug, Default)]
pub struct Confinement {
    rules: BTreeMap<String, Rule>,
    method: Method,
}

#[derive(Debug)]
struct Rule {
    /// Absolute, without `.` or `..` components, each an existing directory at load.
    roots: Vec<PathBuf>,
    kind: PathKind,
}

/// A problem with `paths` at load: the key below the tool (`paths.dir.allowed_roots[0]`) and
/// what is wrong.
pub type LoadProblem = (String, String);

impl Confinement {
    /// Validates `paths` against the tool's `input_schema`; `offline` (a check of the file
    /// alone) does not look for the roots on this machine.
    pub fn build(
        paths: &BTreeMap<String, PathArg>,
        schema: &Value,
        method: Method,
        offline: bool,
    ) -> Result<Self, LoadProblem> {
        let mut rules = BTreeMap::new();
        for (name, arg) in paths {
            let key = format!("paths.{name}");
            let properties = schema.get("properties").and_then(Value::as_object);
            let Some(property) = properties.and_then(|p| p.get(name)) else {
                return Err((key, crate::template::no_property(name, name, properties)));
            };
            let ty = property.get("type").and_then(Value::as_str);
            let item_ty = property.get("items").and_then(|i| i.get("type")).and_then(Value::as_str);
            if !(ty == Some("string") || ty == Some("array") && item_ty == Some("string")) {
                return Err((
                    key,
                    format!("'{name}' must be a string property (or an array of strings) in input_schema to be a path"),
                ));
            }
            if arg.allowed_roots.is_empty() {
                return Err((format!("{key}.allowed_roots"), "list at least one directory".into()));
            }
            let mut roots = Vec::with_capacity(arg.allowed_roots.len());
            for (i, root) in arg.allowed_roots.iter().enumerate() {
                let problem = |p: &str| (format!("{key}.allowed_roots[{i}]"), format!("'{}' {p}", root.display()));
                if !root.is_absolute() || root.components().any(|c| c == Component::ParentDir) {
                    return Err(problem("must be an absolute path without '..'"));
                }
                if !offline && !root.is_dir() {
                    return Err(problem("is not an existing directory"));
                }
                roots.push(root.components().collect());
            }
            rules.insert(name.clone(), Rule { roots, kind: arg.kind });
        }
        Ok(Self { rules, method })
    }

    /// True when `name` is a path argument.
    pub fn is_path(&self, name: &str) -> bool {
        self.rules.contains_key(name)
    }

    /// True when the tool has path arguments.
    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    /// Opens `value` of the path argument `name` (reported as `field`, e.g. `paths.1`); the
    /// error is the tool error's text.
    pub fn open(&self, name: &str, field: &str, value: &str) -> Result<OwnedFd, String> {
        let rule = self.rules.get(name).ok_or_else(|| format!("'{name}' is not a path argument"))?;
        rule.open(value, self.method).map_err(|why| format!("Argument '{field}': '{value}' {why}"))
    }
}

impl Rule {
    /// Where a value may point, for refusals.
    fn hint(&self) -> String {
        match self.roots.as_slice() {
            [one] => format!("give a path under {}", one.display()),
            roots => format!(
                "give a path under one of: {} (a relative path starts at {})",
                roots.iter().map(|r| r.display().to_string()).collect::<Vec<_>>().join(", "),
                roots[0].display()
            ),
        }
    }

    fn open(&self, value: &str, method: Method) -> Result<OwnedFd, String> {
        let path = Path::new(value);
        if path.components().any(|c| c == Component::ParentDir) {
            return Err(format!("contains '..', which path arguments may not; {}", self.hint()));
        }
        let outside = || format!("is outside the directories this tool may use; {}", self.hint());
        let (root, rest) = if path.is_absolute() {
            // The longest root the value starts with (roots may nest), component by component.
            self.roots
                .iter()
                .filter_map(|r| path.strip_prefix(r).ok().map(|rest| (r, rest)))
                .max_by_key(|(r, _)| r.as_os_str().len())
                .ok_or_else(outside)?
        } else {
            (&self.roots[0], path)
        };
        let dir = beneath::open_dir(root)
            .map_err(|e| format!("cannot be opened: the directory {} is unavailable ({e})", root.display()))?;
        let fd = beneath::open(dir.as_fd(), rest, method).map_err(|why| match why {
            Refusal::Escapes => format!("leads outside {} (through '..' or a symbolic link)", root.display()),
            Refusal::NotFound => format!("does not exist under {}", root.display()),
            Refusal::NotADirectory => "is not a path to an existing object: a part of it is not a directory".into(),
            Refusal::TooManyLinks => "has too many levels of symbolic links".into(),
            Refusal::Denied => "cannot be read by the tool (permission denied)".into(),
            Refusal::Other(e) => format!("cannot be opened ({e})"),
        })?;
        let kind = FileType::from_raw_mode(fstat(&fd).map_err(|e| format!("cannot be examined ({e})"))?.st_mode);
        match (self.kind, kind) {
            (PathKind::Any | PathKind::File, FileType::RegularFile)
            | (PathKind::Any | PathKind::Directory, FileType::Directory) => Ok(fd),
            (PathKind::File, _) => Err("is not a regular file".into()),
            (PathKind::Directory, _) => Err("is not a directory".into()),
            (PathKind::Any, _) => Err("is neither a regular file nor a directory".into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::os::unix::fs::symlink;

    fn confinement(roots: &[&Path], kind: &str) -> Confinement {
        let paths: BTreeMap<String, PathArg> =
            serde_json::from_value(json!({"p": {"allowed_roots": roots, "kind": kind}})).unwrap();
        let schema = json!({"properties": {"p": {"type": "string"}}});
        Confinement::build(&paths, &schema, Method::Auto, false).unwrap()
    }

    #[test]
    fn refusals_name_the_roots_and_nothing_more() {
        let t = tempfile::tempdir().unwrap();
        let (a, b) = (t.path().join("a"), t.path().join("b"));
        std::fs::create_dir_all(a.join("dir")).unwrap();
        std::fs::create_dir_all(b.join("nested")).unwrap();
        std::fs::write(a.join("file"), "x").unwrap();
        symlink("/etc", a.join("etc")).unwrap();
        let c = confinement(&[&a, &b], "any");
        let open = |v: &str| c.open("p", "p", v);
        assert!(open("file").is_ok() && open("dir").is_ok() && open("").is_ok());
        assert!(open(&format!("{}/nested", b.display())).is_ok(), "an absolute value under the second root");
        let roots =
            format!("under one of: {}, {} (a relative path starts at {})", a.display(), b.display(), a.display());
        for bad in ["/etc/passwd", "../b/nested", "dir/../../b", &format!("{}x/y", a.display())] {
            let e = open(bad).unwrap_err();
            assert!(e.starts_with(&format!("Argument 'p': '{bad}' ")) && e.contains(&roots), "{e}");
        }
        let e = open("etc/passwd").unwrap_err();
        assert!(e.contains("leads outside") && !e.contains("/etc'") && !e.contains("passwd'x"), "{e}");
        assert!(open("missing").unwrap_err().contains("does not exist under"));
        assert!(confinement(&[&a], "file").open("p", "p", "dir").unwrap_err().ends_with("is not a regular file"));
        assert!(confinement(&[&a], "directory").open("p", "p", "file").unwrap_err().ends_with("is not a directory"));
    }

    #[test]
    fn load_problems_name_the_key() {
        let t = tempfile::tempdir().unwrap();
        let schema = json!({"properties": {"p": {"type": "string"}, "n": {"type": "integer"},
            "many": {"type": "array", "items": {"type": "string"}}}});
        let problem = |paths: Value| {
            let paths: BTreeMap<String, PathArg> = serde_json::from_value(paths).unwrap();
            Confinement::build(&paths, &schema, Method::Auto, false).unwrap_err()
        };
        let root = t.path().to_str().unwrap();
        assert_eq!(problem(json!({"q": {"allowed_roots": [root]}})).0, "paths.q");
        assert_eq!(problem(json!({"n": {"allowed_roots": [root]}})).0, "paths.n");
        assert_eq!(problem(json!({"p": {"allowed_roots": []}})).0, "paths.p.allowed_roots");
        assert_eq!(problem(json!({"p": {"allowed_roots": [root, "rel"]}})).0, "paths.p.allowed_roots[1]");
        assert_eq!(problem(json!({"p": {"allowed_roots": [format!("{root}/../x")]}})).0, "paths.p.allowed_roots[0]");
        let (key, why) = problem(json!({"many": {"allowed_roots": [format!("{root}/missing")]}}));
        assert_eq!(
            (key.as_str(), why.ends_with("is not an existing directory")),
            ("paths.many.allowed_roots[0]", true)
        );
    }
}
