//! Opening a path beneath a directory without ever leaving it: `openat2(2)` with
//! `RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS` where the kernel has it (Linux ≥ 5.6), else a
//! component-by-component walk that opens each name with `O_NOFOLLOW` and resolves symbolic
//! links by hand under the same rules.
//!
//! The rules (those of `RESOLVE_BENEATH`, openat2(2)): a symbolic link is followed only while
//! its target stays beneath the directory; an absolute target, or a `..` that would climb
//! above the directory, is an [`Refusal::Escapes`]. The result is an `O_PATH` handle on the
//! object itself (no read, no side effect: opening a FIFO or a device this way never blocks),
//! so what was checked is what the program later gets, whatever is renamed or swapped in
//! meanwhile.

use std::collections::VecDeque;
use std::ffi::{OsStr, OsString};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt as _;
use std::path::Path;

use rustix::fs::{FileType, Mode, OFlags, fstat, openat, readlinkat};
use rustix::io::Errno;

/// Longest path the kernel takes, with its NUL (`PATH_MAX`, limits.h).
const PATH_MAX: usize = 4096;

/// Symbolic links followed in one resolution, as the kernel's `MAXSYMLINKS` (path_resolution(7)).
const MAX_LINKS: usize = 40;

/// Times `openat2` is retried when the kernel saw a rename or mount race (`EAGAIN`).
#[cfg(any(target_os = "linux", target_os = "android"))]
const RACE_RETRIES: usize = 16;

/// Flags of a handle that names an object without opening it for I/O.
#[cfg(any(target_os = "linux", target_os = "android", target_os = "freebsd"))]
const HANDLE: OFlags = OFlags::PATH.union(OFlags::CLOEXEC);
/// Without `O_PATH`: read-only, and non-blocking so a FIFO cannot hang the open.
#[cfg(not(any(target_os = "linux", target_os = "android", target_os = "freebsd")))]
const HANDLE: OFlags = OFlags::RDONLY.union(OFlags::NONBLOCK).union(OFlags::CLOEXEC);

/// Why a path was not opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// It leads out of the directory (`..` above it, an absolute or escaping symbolic link).
    Escapes,
    /// Nothing by that name.
    NotFound,
    /// A component that must be a directory is not one.
    NotADirectory,
    /// More than [`MAX_LINKS`] symbolic links, or a magic link (`/proc/self/...`).
    TooManyLinks,
    /// The runtime may not look there.
    Denied,
    /// Anything else the system said.
    Other(Errno),
}

impl From<Errno> for Refusal {
    fn from(e: Errno) -> Self {
        match e {
            Errno::XDEV => Self::Escapes,
            Errno::NOENT => Self::NotFound,
            Errno::NOTDIR => Self::NotADirectory,
            Errno::LOOP => Self::TooManyLinks,
            Errno::ACCESS | Errno::PERM => Self::Denied,
            other => Self::Other(other),
        }
    }
}

/// How paths are resolved.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Method {
    /// `openat2` when this kernel has it, the walk otherwise (decided once per process).
    #[default]
    Auto,
    /// Always the walk (tests of the fallback).
    Walk,
}

/// A handle on the directory `path` (a root from the configuration: followed as written).
pub fn open_dir(path: &Path) -> Result<OwnedFd, Errno> {
    rustix::fs::open(path, HANDLE | OFlags::DIRECTORY, Mode::empty())
}

/// Opens `path` (relative; `..` allowed while it stays beneath) beneath the directory `root`.
pub fn open(root: BorrowedFd<'_>, path: &Path, method: Method) -> Result<OwnedFd, Refusal> {
    if path.is_absolute() {
        return Err(Refusal::Escapes);
    }
    match method {
        #[cfg(any(target_os = "linux", target_os = "android"))]
        Method::Auto if kernel_has_openat2() => open_kernel(root, path),
        Method::Auto | Method::Walk => walk(root, path),
    }
}

/// True when `openat2` works here. Old kernels answer `ENOSYS`; some seccomp profiles
/// (container runtimes of the time before it) answer `EPERM` for every call.
#[cfg(any(target_os = "linux", target_os = "android"))]
pub fn kernel_has_openat2() -> bool {
    static HAS: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *HAS.get_or_init(|| {
        let probe = rustix::fs::openat2(rustix::fs::CWD, ".", HANDLE, Mode::empty(), rustix::fs::ResolveFlags::BENEATH);
        !matches!(probe, Err(Errno::NOSYS | Errno::PERM))
    })
}

/// Whether this build has `openat2` and the kernel answers it.
#[cfg(not(any(target_os = "linux", target_os = "android")))]
pub fn kernel_has_openat2() -> bool {
    false
}

#[cfg(any(target_os = "linux", target_os = "android"))]
fn open_kernel(root: BorrowedFd<'_>, path: &Path) -> Result<OwnedFd, Refusal> {
    use rustix::fs::ResolveFlags;
    let how = ResolveFlags::BENEATH | ResolveFlags::NO_MAGICLINKS;
    // An empty path names the root itself (as the walk does); openat2 wants ".".
    let path = if path.as_os_str().is_empty() { Path::new(".") } else { path };
    let mut tries = 0;
    loop {
        match rustix::fs::openat2(root, path, HANDLE, Mode::empty(), how) {
            Err(Errno::AGAIN | Errno::INTR) if tries < RACE_RETRIES => tries += 1,
            done => return done.map_err(Refusal::from),
        }
    }
}

/// The fallback: one `openat(O_NOFOLLOW)` per component from `root`, keeping the handles of
/// the directories passed so that `..` returns to the one actually walked through (never
/// above `root`), and symbolic links expanded in place and walked under the same rules.
///
/// What the kernel does and this cannot: notice a directory being moved out of `root` while
/// the walk is inside it. That needs write access on both sides of the move; the kernel
/// resolution (every Linux since 5.6) refuses it.
pub fn walk(root: BorrowedFd<'_>, path: &Path) -> Result<OwnedFd, Refusal> {
    let mut pending: VecDeque<OsString> = components(path.as_os_str())?;
    let mut dirs: Vec<OwnedFd> = vec![openat(root, ".", HANDLE | OFlags::DIRECTORY, Mode::empty())?];
    let mut links = 0;
    while let Some(name) = pending.pop_front() {
        let here = dirs.last().expect("the root is never popped").as_fd();
        // Every handle on the stack is a directory: `.` stays where it is.
        if name == "." {
            continue;
        }
        if name == ".." {
            if dirs.len() == 1 {
                return Err(Refusal::Escapes);
            }
            dirs.pop();
            continue;
        }
        // Linux and FreeBSD open the link itself (O_PATH); elsewhere O_NOFOLLOW on a link
        // fails with ELOOP (EMLINK on FreeBSD without O_PATH).
        let (fd, kind) = match openat(here, name.as_os_str(), HANDLE | OFlags::NOFOLLOW, Mode::empty()) {
            Ok(fd) => {
                let kind = FileType::from_raw_mode(fstat(&fd)?.st_mode);
                (Some(fd), kind)
            }
            Err(Errno::LOOP | Errno::MLINK) => (None, FileType::Symlink),
            Err(e) => return Err(e.into()),
        };
        match (fd, kind) {
            (_, FileType::Symlink) => {
                links += 1;
                if links > MAX_LINKS {
                    return Err(Refusal::TooManyLinks);
                }
                // Read by name: if it changes after the open above, whatever it says now is
                // walked under the same rules, so a swap cannot lead anywhere the rules refuse.
                let target = match readlinkat(here, name.as_os_str(), Vec::new()) {
                    Ok(target) => target,
                    // No longer a link (swapped since the open): walk the name again; the
                    // link count bounds how often.
                    Err(Errno::INVAL) => {
                        pending.push_front(name);
                        continue;
                    }
                    Err(e) => return Err(e.into()),
                };
                let target = OsStr::from_bytes(target.as_bytes());
                if Path::new(target).is_absolute() {
                    return Err(Refusal::Escapes);
                }
                for c in components(target)?.into_iter().rev() {
                    pending.push_front(c);
                }
            }
            (Some(fd), FileType::Directory) => dirs.push(fd),
            (Some(fd), _) if pending.is_empty() => return Ok(fd),
            _ => return Err(Refusal::NotADirectory),
        }
    }
    Ok(dirs.pop().expect("at least the root"))
}

/// The names of `path` in order: empty ones dropped, `.` and `..` kept, and a `.` added for a
/// trailing `/` (so, as in the kernel, `file/` is not a directory). Longer than `PATH_MAX`
/// is refused, as the kernel refuses it.
fn components(path: &OsStr) -> Result<VecDeque<OsString>, Refusal> {
    let bytes = path.as_bytes();
    if bytes.len() >= PATH_MAX {
        return Err(Refusal::Other(Errno::NAMETOOLONG));
    }
    if bytes.first() == Some(&b'/') {
        return Err(Refusal::Escapes);
    }
    let mut names: VecDeque<OsString> =
        bytes.split(|&b| b == b'/').filter(|n| !n.is_empty()).map(|n| OsStr::from_bytes(n).to_owned()).collect();
    if bytes.last() == Some(&b'/') {
        names.push_back(".".into());
    }
    Ok(names)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    /// A root with `sub/file`, links that stay inside and links that leave, beside an
    /// `outside` directory.
    fn tree() -> (tempfile::TempDir, OwnedFd) {
        let t = tempfile::tempdir().unwrap();
        let root = t.path().join("root");
        std::fs::create_dir_all(root.join("sub/deeper")).unwrap();
        std::fs::create_dir(t.path().join("outside")).unwrap();
        std::fs::write(root.join("sub/file"), "inside").unwrap();
        std::fs::write(t.path().join("outside/secret"), "secret").unwrap();
        symlink("sub/file", root.join("to-file")).unwrap();
        symlink("../../sub", root.join("sub/deeper/up")).unwrap();
        symlink("sub/deeper/up/file", root.join("chain")).unwrap();
        symlink("../outside", root.join("out")).unwrap();
        symlink(t.path().join("outside"), root.join("abs")).unwrap();
        symlink("loop", root.join("loop")).unwrap();
        symlink("/proc/self/root", root.join("magic")).unwrap();
        let fd = open_dir(&root).unwrap();
        (t, fd)
    }

    fn read(fd: &OwnedFd) -> String {
        use std::os::fd::AsRawFd as _;
        std::fs::read_to_string(format!("/proc/self/fd/{}", fd.as_raw_fd())).unwrap()
    }

    #[test]
    fn both_methods_agree_on_every_case() {
        let (_t, root) = tree();
        let methods: &[Method] = if kernel_has_openat2() { &[Method::Auto, Method::Walk] } else { &[Method::Walk] };
        for &m in methods {
            let open = |p: &str| open(root.as_fd(), Path::new(p), m);
            for ok in ["sub/file", "to-file", "chain", "sub/deeper/../file", "./sub//file", "sub/deeper/up/file"] {
                assert_eq!(read(&open(ok).unwrap_or_else(|e| panic!("{m:?} {ok}: {e:?}"))), "inside", "{m:?} {ok}");
            }
            assert!(open("").is_ok() && open("sub/deeper/up").is_ok(), "{m:?}");
            for (bad, why) in [
                ("..", Refusal::Escapes),
                ("sub/../../outside/secret", Refusal::Escapes),
                ("out/secret", Refusal::Escapes),
                ("abs/secret", Refusal::Escapes),
                ("/etc/passwd", Refusal::Escapes),
                ("missing", Refusal::NotFound),
                ("sub/file/x", Refusal::NotADirectory),
                ("loop", Refusal::TooManyLinks),
            ] {
                assert_eq!(open(bad).unwrap_err(), why, "{m:?} {bad}");
            }
            for bad in ["sub/file/", "sub/file/.", "to-file/"] {
                assert_eq!(open(bad).unwrap_err(), Refusal::NotADirectory, "{m:?} {bad}");
            }
            assert!(open("sub/deeper/").is_ok() && open("sub/./deeper/.").is_ok(), "{m:?}");
            // A magic link is absolute: refused by both (the kernel says ELOOP or EXDEV).
            assert!(matches!(open("magic").unwrap_err(), Refusal::Escapes | Refusal::TooManyLinks), "{m:?}");
        }
    }
}
