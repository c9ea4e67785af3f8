//! Running one program: in its own process group, with an empty environment plus the tool's
//! variables, pipes read concurrently (stdout under a cap), and the whole group killed with
//! SIGKILL on timeout, on cancellation, and when the call's future is dropped (the client went
//! away). The child is always reaped: by the call, or by a reaper task after a drop.

use std::ffi::OsString;
use std::io;
use std::os::fd::OwnedFd;
use std::path::Path;
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use command_fds::{CommandFdExt as _, FdMapping};
use mcp_adapter_api::CancellationToken;
use rustix::process::{Pid, Signal, kill_process_group};
use tokio::io::{AsyncRead, AsyncReadExt as _, AsyncWriteExt as _};
use tokio::process::{Child, Command};
use tokio::time::Instant;

/// Bytes of stderr kept for the error message of a failed run.
pub const STDERR_TAIL_BYTES: usize = 4096;

/// Longest stderr line handed to the progress pattern; the rest of a longer line is skipped.
const MAX_LINE_BYTES: usize = 4096;

/// How long to wait for a SIGKILLed group leader to be reaped before leaving it to a reaper
/// task (only a process stuck in uninterruptible I/O takes longer).
const REAP_GRACE: Duration = Duration::from_secs(1);

/// What to run.
#[derive(Debug)]
pub struct Invocation<'a> {
    /// Absolute path of the program.
    pub program: &'a Path,
    /// argv after the program.
    pub args: &'a [String],
    /// The whole environment.
    pub env: &'a [(OsString, OsString)],
    /// Working directory (default: the runtime's).
    pub working_dir: Option<&'a Path>,
    /// Bytes for stdin; `None` gives `/dev/null`.
    pub stdin: Option<Vec<u8>>,
    /// Largest stdout kept.
    pub max_output_bytes: usize,
    /// What the run may use (applied by the supervisor, when there is one).
    pub limits: crate::config::RunLimits,
}

/// A run that ended on its own.
#[derive(Debug)]
pub struct Finished {
    /// How it ended.
    pub status: ExitStatus,
    /// The first `max_output_bytes` of stdout.
    pub stdout: Vec<u8>,
    /// Every byte the program wrote to stdout.
    pub stdout_total: u64,
    /// The last [`STDERR_TAIL_BYTES`] of stderr.
    pub stderr_tail: Vec<u8>,
}

impl Finished {
    /// True when stdout was longer than the cap.
    pub fn truncated(&self) -> bool {
        self.stdout_total > self.stdout.len() as u64
    }
}

/// How a run ended.
#[derive(Debug)]
pub enum Ended {
    /// The program exited (or was killed by someone else).
    Finished(Finished),
    /// The deadline passed; the group was killed.
    TimedOut,
    /// The call was cancelled; the group was killed.
    Cancelled,
}

/// The running program. Dropped before the run is over (the call's future was dropped, a
/// pipe failed), it kills the whole group and hands the child to a reaper task.
#[derive(Debug)]
struct Running {
    child: Option<Child>,
    pgid: Option<Pid>,
    /// The run's supervisor (see `supervise`): its whole process tree is the run.
    supervised: bool,
}

impl Running {
    fn child(&mut self) -> &mut Child {
        self.child.as_mut().expect("the child stays until the run is over")
    }

    /// SIGKILL to everything the run started: the supervisor's descendants (escapees from the
    /// group included), then the group (the supervisor itself, or the program).
    fn kill(&self) {
        if self.supervised
            && let Some(root) = self.pgid
        {
            crate::supervise::kill_tree(root);
        }
        kill_group(self.pgid);
    }

    /// The child was reaped: nothing is left to kill or wait for.
    fn reaped(mut self) {
        self.child = None;
        self.pgid = None;
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.kill();
        if let Some(mut child) = self.child.take() {
            // Wait in a task of our own: in tests, children left to tokio's orphan queue (what
            // dropping a `Child` does) sometimes stayed zombies under load, as that queue is
            // only drained after a SIGCHLD it saw; waiting on the child itself is reliable.
            match tokio::runtime::Handle::try_current() {
                Ok(rt) => drop(rt.spawn(async move {
                    let _ = child.wait().await;
                })),
                Err(_) => drop(child),
            }
        }
    }
}

/// SIGKILL to every process of the group. ESRCH (nobody left) is the usual, fine answer.
fn kill_group(pgid: Option<Pid>) {
    if let Some(pgid) = pgid {
        let _ = kill_process_group(pgid, Signal::KILL);
    }
}

/// Runs `inv` until it exits, `deadline` passes or `cancel` fires. The program inherits
/// `handles` as descriptors 3, 4, ... (the opened path arguments, `crate::confine`). `on_line`
/// sees each stderr line (split at `\n` or `\r`, so progress bars count) while the program runs.
pub async fn run(
    inv: Invocation<'_>,
    handles: Vec<OwnedFd>,
    deadline: Instant,
    cancel: &CancellationToken,
    mut on_line: Option<&mut (dyn FnMut(&str) + Send)>,
) -> io::Result<Ended> {
    let mut running = spawn(&inv, inv.stdin.is_some(), handles)?;
    tracing::Span::current().record("process.pid", running.child().id());
    let pgid = running.pgid;

    let child = running.child();
    let (stdin, stdout, stderr) = (child.stdin.take(), child.stdout.take(), child.stderr.take());
    let feed = async {
        if let (Some(mut pipe), Some(bytes)) = (stdin, inv.stdin) {
            // A program that exits without reading gives EPIPE: not our problem.
            let _ = pipe.write_all(&bytes).await;
        }
    };
    let exit = async {
        let status = child.wait().await;
        // The leader is gone: whatever it left running in its group would be orphaned and
        // could hold our pipes open. The group id cannot be reused while any member lives.
        kill_group(pgid);
        status
    };
    let work = async {
        let ((), out, err, status) =
            tokio::join!(feed, read_capped(stdout, inv.max_output_bytes), read_lines(stderr, &mut on_line), exit);
        let (stdout, stdout_total) = out?;
        Ok::<_, io::Error>(Finished { status: status?, stdout, stdout_total, stderr_tail: err? })
    };
    let ended = tokio::select! {
        // Work first: a run that finished just as the deadline passed keeps its result.
        biased;
        done = work => Ended::Finished(done?),
        () = tokio::time::sleep_until(deadline) => Ended::TimedOut,
        () = cancel.cancelled() => Ended::Cancelled,
    };
    if !matches!(ended, Ended::Finished(_)) {
        running.kill();
        // Only a process stuck in uninterruptible I/O outlives the grace: `Running`'s drop
        // then leaves it to a reaper task.
        if tokio::time::timeout(REAP_GRACE, running.child().wait()).await.is_err() {
            return Ok(ended);
        }
    }
    running.reaped();
    Ok(ended)
}

/// Starts `inv` (its `stdin` bytes aside) with stdout and stderr piped, stdin piped or
/// `/dev/null`, `handles` as descriptors 3, 4, ...: no shell, the given environment only, its
/// own process group, under a supervisor when enabled (which passes the descriptors on).
fn spawn(inv: &Invocation<'_>, stdin: bool, handles: Vec<OwnedFd>) -> io::Result<Running> {
    let supervised = crate::supervise::enabled();
    let mut std_cmd = if supervised {
        crate::supervise::command(inv.program, &inv.limits)
    } else {
        std::process::Command::new(inv.program)
    };
    if !handles.is_empty() {
        // Duplicated onto 3, 4, ... in the child between fork and exec (dup2 leaves the copy
        // inheritable); in this process they stay close-on-exec, so no other run started
        // meanwhile from another thread inherits them.
        let mappings = (crate::confine::FIRST_FD..)
            .zip(handles)
            .map(|(child_fd, parent_fd)| FdMapping { parent_fd, child_fd })
            .collect();
        std_cmd.fd_mappings(mappings).map_err(io::Error::other)?;
    }
    let mut cmd = Command::from(std_cmd);
    cmd.args(inv.args)
        .env_clear()
        .envs(inv.env.iter().map(|(k, v)| (k, v)))
        // Its own group, so one kill reaches everything that stays in it; the supervisor
        // (when enabled) catches what leaves it with setsid.
        .process_group(0)
        // Last resort only (no tokio runtime left to reap in): `Running` kills and reaps.
        .kill_on_drop(true)
        .stdin(if stdin { Stdio::piped() } else { Stdio::null() })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(dir) = inv.working_dir {
        cmd.current_dir(dir);
    }
    let child = cmd.spawn()?;
    let pgid = child.id().and_then(|id| i32::try_from(id).ok()).and_then(Pid::from_raw);
    Ok(Running { child: Some(child), pgid, supervised })
}

/// A long-running program talking over its pipes (a hosted server), with the same hygiene as
/// a run: no shell, the given environment only, its own process group, a supervisor. Dropped,
/// it kills everything the program started and reaps it.
#[derive(Debug)]
pub struct Service {
    running: Running,
}

/// The pipes of a [`Service`].
#[derive(Debug)]
pub struct Pipes {
    /// The program's stdin.
    pub stdin: tokio::process::ChildStdin,
    /// The program's stdout.
    pub stdout: tokio::process::ChildStdout,
    /// The program's stderr.
    pub stderr: tokio::process::ChildStderr,
}

impl Service {
    /// Starts `inv` (its `stdin` bytes and `max_output_bytes` unused: the caller owns the pipes).
    pub fn start(inv: &Invocation<'_>) -> io::Result<(Self, Pipes)> {
        let mut running = spawn(inv, true, Vec::new())?;
        let child = running.child();
        let (Some(stdin), Some(stdout), Some(stderr)) = (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            return Err(io::Error::other("the program's pipes are missing"));
        };
        Ok((Self { running }, Pipes { stdin, stdout, stderr }))
    }

    /// The process id of what was started (the supervisor, when there is one).
    pub fn id(&self) -> Option<u32> {
        self.running.child.as_ref().and_then(Child::id)
    }

    /// Waits until the program exits (its whole tree is killed then).
    pub async fn wait(&mut self) -> io::Result<ExitStatus> {
        let status = self.running.child().wait().await;
        self.running.kill();
        status
    }
}

/// Keeps the first `cap` bytes, drains and counts the rest (so the program never blocks on a
/// full pipe and runs to its normal end).
async fn read_capped(pipe: Option<impl AsyncRead + Unpin>, cap: usize) -> io::Result<(Vec<u8>, u64)> {
    let (mut kept, mut total) = (Vec::new(), 0u64);
    let Some(mut pipe) = pipe else { return Ok((kept, total)) };
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        let n = pipe.read(&mut buf).await?;
        if n == 0 {
            return Ok((kept, total));
        }
        total += n as u64;
        let room = cap.saturating_sub(kept.len());
        kept.extend_from_slice(&buf[..n.min(room)]);
    }
}

/// Hands each line to `on_line` and keeps the tail.
async fn read_lines(
    pipe: Option<impl AsyncRead + Unpin>,
    on_line: &mut Option<&mut (dyn FnMut(&str) + Send)>,
) -> io::Result<Vec<u8>> {
    let mut tail: Vec<u8> = Vec::new();
    let Some(mut pipe) = pipe else { return Ok(tail) };
    let mut buf = vec![0u8; 8 * 1024];
    let mut line: Vec<u8> = Vec::new();
    let mut emit = |line: &mut Vec<u8>| {
        if let Some(f) = on_line.as_deref_mut()
            && !line.is_empty()
        {
            f(&String::from_utf8_lossy(line));
        }
        line.clear();
    };
    loop {
        let n = pipe.read(&mut buf).await?;
        if n == 0 {
            break;
        }
        let chunk = &buf[..n];
        tail.extend_from_slice(chunk);
        if tail.len() > 2 * STDERR_TAIL_BYTES {
            tail.drain(..tail.len() - STDERR_TAIL_BYTES);
        }
        for &b in chunk {
            match b {
                b'\n' | b'\r' => emit(&mut line),
                _ if line.len() < MAX_LINE_BYTES => line.push(b),
                _ => {}
            }
        }
    }
    emit(&mut line);
    if tail.len() > STDERR_TAIL_BYTES {
        tail.drain(..tail.len() - STDERR_TAIL_BYTES);
    }
    Ok(tail)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::ExitStatusExt as _;

    fn sh(script: &str) -> Vec<String> {
        vec!["-c".into(), script.into()]
    }

    async fn run_sh(script: &str, timeout: Duration, max_output_bytes: usize) -> Ended {
        let args = sh(script);
        let inv = Invocation {
            program: Path::new("/bin/sh"),
            args: &args,
            env: &[("ONLY".into(), "this".into())],
            working_dir: Some(Path::new("/")),
            stdin: Some(b"from stdin".to_vec()),
            max_output_bytes,
            limits: Default::default(),
        };
        run(inv, Vec::new(), Instant::now() + timeout, &CancellationToken::new(), None).await.unwrap()
    }

    /// `/bin/sh` with `args`, no environment, stdin or working directory.
    fn bare_sh(args: &[String]) -> Invocation<'_> {
        Invocation {
            program: Path::new("/bin/sh"),
            args,
            env: &[],
            working_dir: None,
            stdin: None,
            max_output_bytes: 10,
            limits: Default::default(),
        }
    }

    fn finished(e: Ended) -> Finished {
        match e {
            Ended::Finished(f) => f,
            other => panic!("{other:?}"),
        }
    }

    #[tokio::test]
    async fn collects_stdout_stderr_status_with_a_scrubbed_environment() {
        let f = finished(run_sh("cat; echo; env; pwd; echo oops >&2; exit 3", Duration::from_secs(10), 1 << 20).await);
        assert_eq!(f.status.code(), Some(3));
        let out = String::from_utf8(f.stdout).unwrap();
        assert!(out.starts_with("from stdin\n"), "{out}");
        // sh adds PWD (and sometimes SHLVL/_) itself; nothing comes from our environment.
        assert!(out.contains("ONLY=this") && !out.contains("HOME=") && !out.contains("CARGO"), "{out}");
        assert!(out.ends_with("/\n"), "{out}");
        assert_eq!(f.stderr_tail, b"oops\n");
    }

    #[tokio::test]
    async fn caps_stdout_but_lets_the_program_finish() {
        let f = finished(run_sh("seq 1 100000; echo done >&2", Duration::from_secs(10), 10).await);
        assert!(f.status.success());
        assert_eq!(f.stdout, b"1\n2\n3\n4\n5\n");
        assert_eq!(f.stdout_total, 588_895);
        assert!(f.truncated());
        assert_eq!(f.stderr_tail, b"done\n");
    }

    #[tokio::test]
    async fn a_timeout_kills_the_whole_group() {
        let marker = format!("{}.{}", 60, std::process::id());
        let started = std::time::Instant::now();
        // A background grandchild holding stdout open: only a group kill ends it.
        let ended = run_sh(&format!("sleep {marker} & sleep {marker}; wait"), Duration::from_millis(300), 100).await;
        assert!(matches!(ended, Ended::TimedOut), "{ended:?}");
        assert!(started.elapsed() < Duration::from_secs(3));
        assert!(wait_gone(&marker).await, "a 'sleep {marker}' survived the timeout");
    }

    #[tokio::test]
    async fn leftovers_of_a_finished_program_are_killed() {
        let marker = format!("{}.{}", 61, std::process::id());
        let f = finished(run_sh(&format!("sleep {marker} & echo started"), Duration::from_secs(10), 100).await);
        assert_eq!(f.stdout, b"started\n");
        assert!(wait_gone(&marker).await, "the background 'sleep {marker}' outlived its parent");
    }

    #[tokio::test]
    async fn cancellation_and_drop_kill_the_group() {
        let marker = format!("{}.{}", 62, std::process::id());
        // A tree: the grandchild is only reached through the group.
        let args = sh(&format!("sleep {marker} & sleep {marker}; wait"));
        let cancel = CancellationToken::new();
        let inv = || bare_sh(&args);
        let deadline = Instant::now() + Duration::from_secs(30);
        let trigger = cancel.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(200)).await;
            trigger.cancel();
        });
        assert!(matches!(run(inv(), Vec::new(), deadline, &cancel, None).await.unwrap(), Ended::Cancelled));
        assert!(wait_gone(&marker).await);

        let dropped = tokio::time::timeout(
            Duration::from_millis(200),
            run(inv(), Vec::new(), deadline, &CancellationToken::new(), None),
        )
        .await;
        assert!(dropped.is_err(), "sleep finished early");
        assert!(wait_gone(&marker).await, "dropping the call left 'sleep {marker}' running");
    }

    #[tokio::test]
    async fn stderr_lines_reach_the_callback() {
        let args = sh("printf 'a\\nb\\rc\\n\\nd' >&2; kill -9 $$");
        let mut lines = Vec::new();
        let mut on_line = |l: &str| lines.push(l.to_owned());
        let inv = bare_sh(&args);
        let ended = run(
            inv,
            Vec::new(),
            Instant::now() + Duration::from_secs(10),
            &CancellationToken::new(),
            Some(&mut on_line),
        )
        .await;
        let f = finished(ended.unwrap());
        assert_eq!(f.status.signal(), Some(9));
        assert_eq!(lines, ["a", "b", "c", "d"]);
    }

    #[tokio::test]
    async fn a_missing_program_is_an_error() {
        let inv = Invocation {
            program: Path::new("/nonexistent/program"),
            args: &[],
            env: &[],
            working_dir: None,
            stdin: None,
            max_output_bytes: 10,
            limits: Default::default(),
        };
        assert!(
            run(inv, Vec::new(), Instant::now() + Duration::from_secs(1), &CancellationToken::new(), None)
                .await
                .is_err()
        );
    }

    /// Waits up to 3 s until no process has `marker` in its command line.
    async fn wait_gone(marker: &str) -> bool {
        for _ in 0..60 {
            if !any_cmdline_contains(marker) {
                return true;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        false
    }

    fn any_cmdline_contains(marker: &str) -> bool {
        std::fs::read_dir("/proc").unwrap().flatten().any(|e| {
            std::fs::read(e.path().join("cmdline"))
                .is_ok_and(|c| String::from_utf8_lossy(&c).split('\0').any(|a| a.contains(marker)))
        })
    }
}
