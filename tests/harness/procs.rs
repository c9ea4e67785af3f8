//! Processes a test started, found through `/proc`: tool scripts, markers that make their
//! processes findable, and the zombies a runtime failed to reap.

use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

/// Writes an executable `#!/bin/sh` script `dir/name`.
pub fn script(dir: &Path, name: &str, body: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).expect("write script");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod script");
    path
}

/// A number of seconds no other process on the machine has in its command line, e.g.
/// `60.4711000003` (`sleep` takes it as it is), to find the processes a test started.
pub fn unique_seconds(whole: u32) -> String {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    format!("{whole}.{}{:06}", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed))
}

/// Pids of live (not zombie) processes with an argv entry containing `marker`.
pub fn processes_with(marker: &str) -> Vec<u32> {
    entries()
        .filter(|(_, dir)| {
            stat_state(dir) != Some('Z')
                && std::fs::read(dir.join("cmdline"))
                    .is_ok_and(|c| c.split(|b| *b == 0).any(|a| String::from_utf8_lossy(a).contains(marker)))
        })
        .map(|(pid, _)| pid)
        .collect()
}

/// `stat` lines of zombie children of `parent` (exited, never reaped).
pub fn zombie_children(parent: u32) -> Vec<String> {
    entries()
        .filter_map(|(_, dir)| {
            // "pid (comm) S ppid ...": comm may hold spaces, so read after the last ')'.
            let stat = std::fs::read_to_string(dir.join("stat")).ok()?;
            let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
            (fields.first() == Some(&"Z") && fields.get(1) == Some(&parent.to_string().as_str())).then_some(stat)
        })
        .collect()
}

/// The state letter of `/proc/<pid>/stat` (`R`, `S`, `Z`, ...).
fn stat_state(dir: &Path) -> Option<char> {
    let stat = std::fs::read_to_string(dir.join("stat")).ok()?;
    stat.rsplit_once(')')?.1.trim_start().chars().next()
}

fn entries() -> impl Iterator<Item = (u32, PathBuf)> {
    std::fs::read_dir("/proc")
        .expect("/proc")
        .flatten()
        .filter_map(|e| Some((e.file_name().to_str()?.parse().ok()?, e.path())))
}
