//! Production hardening, black-box: the real binary with real child processes, real loopback
//! upstreams and raw TCP clients. Each test is the regression test of one defect of the
//! "Production hardening" issue.

use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use mcp_e2e::Server;
use serde_json::json;

/// Writes an executable `#!/bin/sh` script.
fn script(dir: &Path, name: &str, body: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

/// A number of seconds no other process on the machine has in its command line.
fn unique_seconds(whole: u32) -> String {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    format!("{whole}.{}{:06}", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed))
}

/// Pids of live (not zombie) processes with an argv entry containing `marker`.
fn processes_with(marker: &str) -> Vec<u32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| Some((e.file_name().to_str()?.parse::<u32>().ok()?, e.path())))
        .filter(|(_, dir)| {
            let zombie = std::fs::read_to_string(dir.join("stat"))
                .is_ok_and(|s| s.rsplit_once(')').is_some_and(|(_, rest)| rest.trim_start().starts_with('Z')));
            !zombie
                && std::fs::read(dir.join("cmdline"))
                    .is_ok_and(|c| c.split(|b| *b == 0).any(|a| String::from_utf8_lossy(a).contains(marker)))
        })
        .map(|(pid, _)| pid)
        .collect()
}

async fn eventually(what: &str, within: Duration, cond: impl Fn() -> bool) {
    let end = Instant::now() + within;
    while !cond() {
        assert!(Instant::now() < end, "{what}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A tool whose processes leave its process group three ways: `setsid` (a new session),
/// `setsid sh -c` (a new session with a child of its own) and `set -m` in a subshell that
/// exits at once (a double fork: the sleeper is orphaned, in a group of its own).
fn escaping_tool(dir: &Path, timeout_ms: u64) -> String {
    let escape = script(
        dir,
        "escape",
        "setsid sleep \"$1\" &\nsetsid sh -c 'sleep \"$0\"; true' \"$1\" &\n(set -m; sleep \"$1\" &)\nsleep \"$1\"\nwait",
    );
    format!(
        r#"
[[adapters]]
name = "escapers"
kind = "cli"

[[adapters.tools]]
name = "escape"
description = "Sleeps in processes that leave the process group"
executable = "{escape}"
args = ["{{seconds}}"]
timeout_ms = {timeout_ms}
input_schema = {{ type = "object", required = ["seconds"], properties = {{ seconds = {{ type = "string" }} }} }}
"#,
        escape = escape.display()
    )
}

/// Defect 2: a timed-out tool whose children left its process group leaves nothing behind.
#[tokio::test]
async fn a_timed_out_tool_leaves_no_process_even_outside_its_group() {
    let dir = tempfile::tempdir().unwrap();
    let s = Server::start(&escaping_tool(dir.path(), 1000));
    let marker = unique_seconds(60);
    let a = s.mcp().tool("escape", json!({ "seconds": marker })).await;
    assert_eq!(a.result()["isError"], true, "{:?}", a.messages);
    let left = || processes_with(&marker);
    eventually(&format!("processes with {marker} survived the timeout: {:?}", left()), Duration::from_secs(5), || {
        left().is_empty()
    })
    .await;
}

/// Defect 2: when the runtime is killed with SIGKILL mid-call, the tool's processes die too,
/// the detached ones included.
#[tokio::test]
async fn a_killed_runtime_takes_its_tools_processes_with_it() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = Server::start(&escaping_tool(dir.path(), 60_000));
    let marker = unique_seconds(60);
    let mcp = s.mcp();
    let call = {
        let marker = marker.clone();
        tokio::spawn(async move { drop(mcp.tool("escape", json!({ "seconds": marker })).await) })
    };
    // Four sleepers (and the shells) once the script is running.
    eventually("the tool never started its sleepers", Duration::from_secs(10), || processes_with(&marker).len() >= 4)
        .await;
    s.signal("KILL");
    assert!(s.wait_exit(Duration::from_secs(5)).is_some(), "the runtime did not die");
    let left = || processes_with(&marker);
    eventually(&format!("processes with {marker} outlived the runtime: {:?}", left()), Duration::from_secs(5), || {
        left().is_empty()
    })
    .await;
    // The call fails with the connection (a panic inside the task): not the point here.
    call.abort();
}
