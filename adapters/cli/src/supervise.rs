//! Containing every process a run starts, not only its process group.
//!
//! A process group is not a container: a program that calls `setsid` (or a shell running
//! `set -m`) leaves it, and nothing a runtime does in the child before `exec` survives into
//! grandchildren (`PR_SET_PDEATHSIG` is cleared by `fork`). So each run is started under a
//! small **supervisor**: the runtime's own binary re-executed with [`ARG`] (no `pre_exec`, so
//! no `unsafe`). The supervisor
//!
//! - makes itself a child subreaper (`PR_SET_CHILD_SUBREAPER`, prctl(2)): every descendant
//!   that is orphaned, however it detached (`setsid`, double fork), is re-parented to it, so
//!   the process tree below it is the whole run;
//! - starts the program with the same stdio, environment and directory, and reaps whatever is
//!   re-parented to it;
//! - when the program exits, kills every descendant left (what the group kill did, now
//!   including escapees) and exits the way the program did (same code, same signal);
//! - when the runtime dies (even by `SIGKILL`, which no handler sees), notices within
//!   [`PARENT_POLL`] that its parent changed, kills every descendant and exits.
//!
//! The runtime, at a timeout, a cancellation or a dropped call, kills the supervisor's whole
//! tree with [`kill_tree`] (found in `/proc`) and then the group.
//!
//! The supervisor is used when the binary opted in with [`enable`] (the `mcp-runtime` binary
//! does, first thing in `main`); elsewhere (unit tests, benches) a run is only a process group.

use std::collections::HashMap;
use std::ffi::OsString;
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use rustix::process::{Pid, Signal, WaitOptions, getpid, getppid, kill_process, set_child_subreaper, wait};

/// The first argument that puts the binary in supervisor mode.
pub const ARG: &str = "__mcp-cli-supervise";

/// How often a supervisor checks that the runtime is still its parent.
pub const PARENT_POLL: Duration = Duration::from_millis(100);

/// The binary re-executed as supervisor; `/proc/self/exe` still works when the file on disk
/// was replaced (an upgrade) or deleted.
pub const SELF_EXE: &str = "/proc/self/exe";

static ENABLED: AtomicBool = AtomicBool::new(false);

/// For a binary's `main`, before anything else: in supervisor mode (`argv[1] == ARG`) this runs
/// the supervisor and exits; otherwise it enables supervised runs and returns.
pub fn enable() {
    let mut args = std::env::args_os();
    if args.nth(1).is_some_and(|a| a == ARG) {
        std::process::exit(supervise(args));
    }
    if std::path::Path::new(SELF_EXE).exists() {
        ENABLED.store(true, Ordering::Relaxed);
    }
}

/// True when runs go through a supervisor.
pub fn enabled() -> bool {
    ENABLED.load(Ordering::Relaxed)
}

/// The command that runs `program` under a supervisor watching this process.
pub fn command(program: &std::path::Path) -> Command {
    let mut cmd = Command::new(SELF_EXE);
    cmd.arg(ARG).arg(getpid().as_raw_nonzero().to_string()).arg(program);
    cmd
}

/// Supervisor mode: `args` are the runtime's pid, the program and its arguments. Returns the
/// exit code (a program killed by a signal is mirrored by the same signal, see below).
fn supervise(mut args: impl Iterator<Item = OsString>) -> i32 {
    let parent = args.next().and_then(|p| p.to_str()?.parse::<i32>().ok()).and_then(Pid::from_raw);
    let Some(program) = args.next() else { return 127 };
    if let Err(e) = set_child_subreaper(Some(getpid())) {
        eprintln!("mcp-runtime supervisor: cannot become a subreaper: {e}");
    }
    // The runtime may already be gone (it died between fork and here).
    if parent.is_none() || getppid() != parent {
        return 137;
    }
    let child = match Command::new(&program).args(args).spawn() {
        Ok(child) => child,
        Err(e) => {
            eprintln!("could not run {}: {e}", program.to_string_lossy());
            return 127;
        }
    };
    let leader = Pid::from_child(&child);
    // Reaped below with wait(2), not through `Child`.
    drop(child);
    std::thread::spawn(move || {
        loop {
            std::thread::sleep(PARENT_POLL);
            if getppid() != parent {
                kill_tree(getpid());
                std::process::exit(137);
            }
        }
    });
    let mut status = None;
    loop {
        match wait(WaitOptions::empty()) {
            Ok(Some((pid, s))) if pid == leader => {
                status = Some(s);
                kill_tree(getpid());
            }
            Ok(_) | Err(rustix::io::Errno::INTR) => {}
            // ECHILD: everything is reaped.
            Err(_) => break,
        }
    }
    match status {
        Some(s) if s.exited() => s.exit_status().unwrap_or(0),
        Some(s) => {
            let signal = s.terminating_signal().unwrap_or(Signal::KILL.as_raw());
            // Die the same way, so the runtime reports the program's signal. Signals this
            // binary ignores (Rust ignores SIGPIPE) fall through to the shell's 128 + n.
            if let Some(sig) = Signal::from_named_raw(signal) {
                let _ = kill_process(getpid(), sig);
                std::thread::sleep(Duration::from_millis(100));
            }
            128 + signal
        }
        None => 137,
    }
}

/// SIGKILL to every descendant of `root` (not `root` itself), found in `/proc`, until none is
/// left (a process forking while we kill is caught in the next round). Zombies are skipped:
/// they are dead already, and their children were re-parented to a subreaper in the tree.
pub fn kill_tree(root: Pid) {
    for _ in 0..64 {
        let found = descendants(root.as_raw_nonzero().get());
        if found.is_empty() {
            return;
        }
        for pid in found {
            if let Some(pid) = Pid::from_raw(pid) {
                let _ = kill_process(pid, Signal::KILL);
            }
        }
    }
}

/// Live descendants of `root`, from each process's parent in `/proc/<pid>/stat`.
fn descendants(root: i32) -> Vec<i32> {
    let mut children: HashMap<i32, Vec<i32>> = HashMap::new();
    let Ok(dir) = std::fs::read_dir("/proc") else { return Vec::new() };
    for entry in dir.flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse::<i32>().ok()) else { continue };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else { continue };
        // "pid (comm) S ppid ...": comm may hold spaces and ')', so read after the last ')'.
        let Some((_, rest)) = stat.rsplit_once(')') else { continue };
        let mut fields = rest.split_whitespace();
        let (Some(state), Some(ppid)) = (fields.next(), fields.next().and_then(|p| p.parse::<i32>().ok())) else {
            continue;
        };
        if state != "Z" && state != "X" {
            children.entry(ppid).or_default().push(pid);
        }
    }
    let mut found = Vec::new();
    let mut next = vec![root];
    while let Some(p) = next.pop() {
        if let Some(kids) = children.get(&p) {
            found.extend_from_slice(kids);
            next.extend_from_slice(kids);
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_and_kills_a_detached_grandchild() {
        // sh starts a grandchild in its own session, then waits: the tree is sh → setsid'd sleep.
        let mut sh = Command::new("sh").args(["-c", "setsid sleep 30 & wait"]).spawn().unwrap();
        let root = Pid::from_child(&sh);
        let end = std::time::Instant::now() + Duration::from_secs(5);
        while descendants(root.as_raw_nonzero().get()).is_empty() {
            assert!(std::time::Instant::now() < end, "the grandchild never showed up");
            std::thread::sleep(Duration::from_millis(10));
        }
        kill_tree(root);
        assert!(descendants(root.as_raw_nonzero().get()).is_empty());
        // sh's `wait` returns once the grandchild is dead.
        let status = sh.wait().unwrap();
        assert!(status.success() || status.code().is_some(), "{status:?}");
    }
}
