//! Finding the program once, at start-up: an absolute path, or a bare name on the runtime's
//! `PATH`. Calls then run that absolute path, whatever the child's environment says.

use std::ffi::OsStr;
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};

/// What execvp(3) searches when `PATH` is unset.
const DEFAULT_PATH: &str = "/usr/local/bin:/usr/bin:/bin";

/// What can be said of `executable` without looking for it: it names a program, by a bare
/// name or an absolute path.
pub fn check_name(executable: &str) -> Result<(), String> {
    if executable.is_empty() {
        return Err("must name a program".into());
    }
    if executable.contains('/') && !Path::new(executable).is_absolute() {
        return Err(format!(
            "'{executable}' is a relative path, which would depend on the working directory; \
             give an absolute path or a bare name found on PATH"
        ));
    }
    Ok(())
}

/// Resolves `executable` against `path` (the runtime's `PATH`, if any).
pub fn resolve(executable: &str, path: Option<&OsStr>) -> Result<PathBuf, String> {
    check_name(executable)?;
    if executable.contains('/') {
        let p = Path::new(executable);
        return if is_executable(p) {
            Ok(p.to_owned())
        } else {
            Err(format!("'{executable}' does not exist or is not an executable file"))
        };
    }
    let path = path.unwrap_or(OsStr::new(DEFAULT_PATH));
    // Relative PATH entries ('.', '') would make the program depend on the working
    // directory: skip them, as a hardened execvp does.
    std::env::split_paths(path)
        .filter(|dir| dir.is_absolute())
        .map(|dir| dir.join(executable))
        .find(|candidate| is_executable(candidate))
        .ok_or_else(|| {
            format!(
                "'{executable}' was not found on PATH ({}); install it or give an absolute path",
                path.to_string_lossy()
            )
        })
}

fn is_executable(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_bare_names_on_path_and_checks_absolute_ones() {
        let found = resolve("sh", Some(OsStr::new(".:/nonexistent:/usr/bin:/bin"))).unwrap();
        assert!(found.is_absolute() && found.ends_with("sh"), "{found:?}");
        assert!(resolve("sh", None).is_ok());
        assert!(resolve("/bin/sh", None).is_ok());
        let e = resolve("no-such-program-xyz", Some(OsStr::new("/usr/bin"))).unwrap_err();
        assert!(e.contains("not found on PATH (/usr/bin)"), "{e}");
        assert!(resolve("./sh", None).unwrap_err().contains("relative"));
        assert!(resolve("/etc/passwd", None).unwrap_err().contains("not an executable"));
        assert!(resolve("/nonexistent/x", None).is_err());
        assert!(resolve("", None).is_err());
    }
}
