//! A configuration split as Kubernetes users split it: a base file, a `conf.d/` folder of
//! TOML, YAML and JSON files from other ConfigMaps, an environment override. `check` and
//! `serve` read the set as one; a problem in any file is shown at that file's line; a change
//! to one file of the set reloads the whole set.

use std::path::{Path, PathBuf};

use mcp_e2e::Server;
use serde_json::json;

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, text).unwrap();
    path
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The base: the server and the demo tools.
const BASE: &str = "[server]\nname = \"base\"\n\n[[adapters]]\nname = \"demo\"\nkind = \"fixtures\"\nset = \"demo\"\n";

/// A team's adapter (YAML) and the operators' policies (JSON).
fn conf_d(dir: &Path) -> PathBuf {
    write(
        dir,
        "conf.d/10-team.yaml",
        "server:\n  name: team-server\nadapters:\n  - name: clock\n    kind: fixtures\n    set: clock\n",
    );
    write(dir, "conf.d/20-ops.json", "{\n  \"tool_policies\": { \"echo\": { \"timeout_ms\": 500 } }\n}\n");
    dir.join("conf.d")
}

#[test]
fn check_reads_a_set_of_three_formats_with_an_override() {
    let dir = tempfile::tempdir().unwrap();
    let base = write(dir.path(), "base.toml", BASE);
    let conf = conf_d(dir.path());
    let out = mcp_e2e::run(
        Some(dir.path()),
        &["--config", "base.toml", "--config", "conf.d", "check"],
        &[("MCP_RUNTIME__SERVER__PAGE_SIZE", "5")],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let report = text(&out.stdout);
    assert!(report.starts_with("base.toml + conf.d: ok (2 adapters; 4 tools,"), "{report}");
    for row in [["echo", "demo", "fixtures"], ["utc_now", "clock", "fixtures"]] {
        assert!(report.lines().any(|l| l.split_whitespace().eq(row)), "{row:?}: {report}");
    }
    // A duplicate across files names both.
    write(dir.path(), "conf.d/30-dup.toml", "[[adapters]]\nname = \"clock\"\nkind = \"fixtures\"\nset = \"demo\"\n");
    let out = mcp_e2e::run(Some(dir.path()), &["--config", "base.toml", "--config", "conf.d", "check"], &[]);
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(err.contains("'clock' is also declared in conf.d/10-team.yaml:4;"), "{err}");
    assert!(err.contains(" --> conf.d/30-dup.toml:2:8\n"), "{err}");
    drop((base, conf));
}

#[test]
fn problems_in_every_file_of_a_set_are_reported_at_once_each_at_its_line() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "base.toml", "[server]\npage_size = 0\n");
    write(dir.path(), "conf.d/a.yaml", "server:\n  call_timeout_ms: soon\n");
    write(dir.path(), "conf.d/b.json", "{\n  \"tasks\": { \"ttl\": 5 }\n}\n");
    let out =
        mcp_e2e::run(Some(dir.path()), &["--config", "base.toml", "--config", "conf.d", "check", "--offline"], &[]);
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(err.contains(" --> base.toml:2:13\n"), "{err}");
    assert!(err.contains("error: server.call_timeout_ms: invalid type: string \"soon\""), "{err}");
    assert!(err.contains(" --> conf.d/a.yaml:2:20\n"), "{err}");
    assert!(err.contains("error: tasks.ttl: unknown key `ttl`"), "{err}");
    assert!(err.contains(" --> conf.d/b.json:2:14\n"), "{err}");
    assert!(err.ends_with("has 3 problems\n"), "{err}");
}

#[tokio::test]
async fn a_change_to_one_file_of_the_set_reloads_the_set() {
    let dir = tempfile::tempdir().unwrap();
    let base = write(dir.path(), "base.toml", BASE);
    let conf = conf_d(dir.path());
    let server = Server::start_set(&[base, conf.clone()], &[("RUST_LOG", "info")]);
    let mcp = server.mcp();
    let tools = mcp.call("tools/list", json!({})).await;
    let names: Vec<&str> =
        tools.result()["tools"].as_array().unwrap().iter().filter_map(|t| t["name"].as_str()).collect();
    assert!(names.contains(&"utc_now") && names.contains(&"echo"), "{names:?}");

    // The operators' file gains a policy: only it changes, the set reloads.
    std::fs::write(
        conf.join("20-ops.json"),
        "{\n  \"tool_policies\": { \"echo\": { \"timeout_ms\": 500, \"confirm\": true } }\n}\n",
    )
    .unwrap();
    let line = server.log_line("configuration reloaded").await;
    assert!(line.contains("changed=tool_policies"), "{line}");
    let asked = mcp.with_capabilities(json!({"elicitation": {"form": {}}})).tool("echo", json!({"text": "hi"})).await;
    assert_eq!(asked.result()["resultType"], "input_required", "{:?}", asked.messages);

    // A broken file in the folder is rejected at its line; the set keeps serving.
    std::fs::write(conf.join("30-broken.yaml"), "server:\n  page_size: many\n").unwrap();
    let rejected = server.log_line("configuration rejected").await;
    assert!(rejected.contains("30-broken.yaml:2:14: server.page_size: invalid type"), "{rejected}");
    assert_eq!(mcp.tool("echo", json!({"text": "still"})).await.result()["resultType"], "input_required");
}
