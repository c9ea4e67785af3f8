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

/// How the supervisor says, on stderr with exit code 127, that the program itself could not
/// be started (the adapter keeps that line, which holds its path, for the operator's log).
pub const SPAWN_FAILED: &str = "mcp-runtime: cannot start the program ";

use std::collections::HashMap;
use std::ffi::OsString;
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use std::sync::Mutex;

use rustix::process::{
    Pid, Resource, Rlimit, Signal, WaitOptions, getpid, getppid, getrlimit, kill_process, set_child_subreaper,
    setrlimit, wait,
};

use crate::config::RunLimits;

/// The first argument that puts the binary in supervisor mode.
pub const ARG: &str = "__mcp-cli-supervise";

/// How often a supervisor checks that the runtime is still its parent, and (when limited)
/// the memory and process count of its tree.
pub const PARENT_POLL: Duration = Duration::from_millis(100);

/// Why the supervisor killed the run, said on the run's stderr (so it reaches the result).
static KILLED_FOR: Mutex<Option<String>> = Mutex::new(None);

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

/// The command that runs `program` under a supervisor watching this process, with `limits`.
pub fn command(program: &std::path::Path, limits: &RunLimits) -> Command {
    let mut cmd = Command::new(SELF_EXE);
    cmd.arg(ARG).arg(getpid().as_raw_nonzero().to_string()).arg(encode(limits)).arg(program);
    cmd
}

/// `limits` as one argument: `memory_bytes,cpu_seconds,processes,file_bytes,open_files`.
fn encode(l: &RunLimits) -> String {
    format!("{},{},{},{},{}", l.memory_bytes, l.cpu_seconds, l.processes, l.file_bytes, l.open_files)
}

fn decode(s: &str) -> Option<RunLimits> {
    let v: Vec<u64> = s.split(',').map(str::parse).collect::<Result<_, _>>().ok()?;
    let [memory_bytes, cpu_seconds, processes, file_bytes, open_files] = v[..] else { return None };
    Some(RunLimits { memory_bytes, cpu_seconds, processes, file_bytes, open_files })
}

/// Sets the rlimits of `limits` on this process; the program and everything it starts
/// inherit them. CPU: the soft limit sends `SIGXCPU`, the hard one (a second later) `SIGKILL`.
fn set_rlimits(l: &RunLimits) {
    let set = |resource: Resource, soft: u64, hard: u64, key: &str| {
        if soft == 0 {
            return;
        }
        // Never above the hard limit we were given (raising it needs privileges).
        let max = getrlimit(resource).maximum;
        let clamp = |v: u64| max.map_or(v, |m| v.min(m));
        let new = Rlimit { current: Some(clamp(soft)), maximum: Some(clamp(hard)) };
        if let Err(e) = setrlimit(resource, new) {
            eprintln!("mcp-runtime supervisor: cannot set limits.{key}: {e}");
        }
    };
    set(Resource::Cpu, l.cpu_seconds, l.cpu_seconds.saturating_add(1), "cpu_seconds");
    set(Resource::Fsize, l.file_bytes, l.file_bytes, "file_bytes");
    set(Resource::Nofile, l.open_files, l.open_files, "open_files");
}

/// Memory (resident, summed over the tree) and process count of the tree below `root`.
fn usage(root: i32) -> (u64, u64) {
    let tree = descendants(root);
    // `VmRSS:   1234 kB` in /proc/<pid>/status (proc(5)).
    let rss_kib = tree
        .iter()
        .filter_map(|pid| std::fs::read_to_string(format!("/proc/{pid}/status")).ok())
        .filter_map(|status| {
            let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
            line.split_whitespace().nth(1)?.parse::<u64>().ok()
        })
        .sum::<u64>();
    (rss_kib.saturating_mul(1024), tree.len() as u64)
}

/// The limit `usage` breaks, worded for the tool result.
fn exceeded(l: &RunLimits, (memory, processes): (u64, u64)) -> Option<String> {
    if l.memory_bytes > 0 && memory > l.memory_bytes {
        return Some(format!(
            "the tool's processes used {memory} bytes of memory, over limits.memory_bytes ({} bytes); all were killed",
            l.memory_bytes
        ));
    }
    if l.processes > 0 && processes > l.processes {
        return Some(format!(
            "the tool ran {processes} processes at once, over limits.processes ({}); all were killed",
            l.processes
        ));
    }
    None
}

/// Supervisor mode: `args` are the runtime's pid, the program and its arguments. Returns the
/// exit code (a program killed by a signal is mirrored by the same signal, see below).
fn supervise(mut args: impl Iterator<Item = OsString>) -> i32 {
    let parent = args.next().and_then(|p| p.to_str()?.parse::<i32>().ok()).and_then(Pid::from_raw);
    let Some(limits) = args.next().and_then(|l| decode(l.to_str()?)) else { return 127 };
    let Some(program) = args.next() else { return 127 };
    set_rlimits(&limits);
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
            eprintln!("{SPAWN_FAILED}{}: {e}", program.to_string_lossy());
            return 127;
        }
    };
    let leader = Pid::from_child(&child);
    // Reaped below with wait(2), not through `Child`.
    drop(child);
    let watched = limits.memory_bytes > 0 || limits.processes > 0;
    std::thread::spawn(move || {
        loop {
            std::thread::sleep(PARENT_POLL);
            if getppid() != parent {
                kill_tree(getpid());
                std::process::exit(137);
            }
            if watched && let Some(why) = exceeded(&limits, usage(getpid().as_raw_nonzero().get())) {
                *KILLED_FOR.lock().unwrap_or_else(|p| p.into_inner()) = Some(why);
                kill_tree(getpid());
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
    let killed_for = KILLED_FOR.lock().unwrap_or_else(|p| p.into_inner()).take();
    if let Some(why) = &killed_for {
        eprintln!("mcp-runtime: {why}");
    }
    // The program died of a limit signal, or (a shell's way, 128 + n) a process it ran did.
    let limit_signal = match status {
        Some(s) if s.exited() => s.exit_status().and_then(|c| c.checked_sub(128)),
        Some(s) => s.terminating_signal(),
        None => None,
    };
    if limits.cpu_seconds > 0 && limit_signal == Some(Signal::XCPU.as_raw()) {
        eprintln!(
            "mcp-runtime: a process of the tool used more CPU time than limits.cpu_seconds ({} s) and was killed (SIGXCPU)",
            limits.cpu_seconds
        );
    } else if limits.file_bytes > 0 && limit_signal == Some(Signal::XFSZ.as_raw()) {
        eprintln!(
            "mcp-runtime: a process of the tool wrote a file larger than limits.file_bytes ({} bytes) and was killed (SIGXFSZ)",
            limits.file_bytes
        );
    }
    match status {
        Some(s) if s.exited() => s.exit_status().unwrap_or(0),
        Some(s) => {
            let signal = s.terminating_signal().unwrap_or(Signal::KILL.as_raw());
            // Die the same way, so the runtime reports the program's signal. Twice: Rust's
            // runtime catches SIGSEGV and SIGBUS (to detect stack overflows) and, for a fault
            // it did not cause, restores the default action and returns, so the first one is
            // swallowed and the second kills. Signals this binary ignores (Rust ignores
            // SIGPIPE) fall through to the shell's 128 + n, named on stderr.
            if let Some(sig) = Signal::from_named_raw(signal) {
                for _ in 0..2 {
                    let _ = kill_process(getpid(), sig);
                    std::thread::sleep(Duration::from_millis(100));
                }
            }
            eprintln!("mcp-runtime: the program was killed by {}", crate::output::signal_name(signal));
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
    fn limits_travel_as_one_argument_and_name_what_was_exceeded() {
        let l = RunLimits { memory_bytes: 1 << 20, cpu_seconds: 2, processes: 3, file_bytes: 4, open_files: 5 };
        assert_eq!(decode(&encode(&l)), Some(l));
        assert_eq!(decode("1,2,3"), None);
        assert!(exceeded(&l, (2 << 20, 1)).unwrap().contains("limits.memory_bytes"));
        assert!(exceeded(&l, (1, 4)).unwrap().contains("limits.processes"));
        assert_eq!(exceeded(&l, (1 << 20, 3)), None);
        let none = RunLimits { memory_bytes: 0, cpu_seconds: 0, processes: 0, file_bytes: 0, open_files: 0 };
        assert_eq!(exceeded(&none, (u64::MAX, u64::MAX)), None);
    }

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
