//! The first hour of a new user: `check` and its report, the one log line per call, the
//! refused Host named with the setting to change, plain logs on a pipe.

use std::process::{Command, Output};
use std::time::Duration;

use mcp_e2e::wait::eventually;
use mcp_e2e::{Server, paths};
use serde_json::json;

/// Runs the binary with `args` in an empty environment (PATH only, plus `env`).
fn run(args: &[&str], env: &[(&str, &str)]) -> Output {
    mcp_e2e::run(None, args, env)
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn write(dir: &tempfile::TempDir, name: &str, body: &str) -> String {
    let path = dir.path().join(name);
    std::fs::write(&path, body).unwrap();
    path.display().to_string()
}

#[test]
fn check_reports_every_problem_of_the_file_once_with_line_and_caret() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(
        &dir,
        "first.toml",
        "[server]\nlistn = \"127.0.0.1:8080\"\n\n[[adapters]]\nname = \"clock\"\nkind = \"cli\"\n\n[[adapters.tools]]\nname = \"utc_now\"\ndescription = \"The time.\"\nexecutable = \"date\"\ntimeout_ms = \"5000\"\n",
    );
    let out = run(&["--config", &file, "check"], &[]);
    assert_eq!(out.status.code(), Some(1));
    let expected = format!(
        "error: server.listn: unknown key `listn`
 --> {file}:2:1
  |
2 | listn = \"127.0.0.1:8080\"
  | ^^^^^
  = help: did you mean `listen`?

error: adapters.clock.tools.utc_now.timeout_ms: invalid type: string \"5000\", expected a whole number (0 or more)
  --> {file}:12:14
   |
12 | timeout_ms = \"5000\"
   |              ^^^^^^
   = help: write it without quotes: `timeout_ms = 5000`

error: {file} has 2 problems
"
    );
    assert_eq!(text(&out.stderr), expected);
    // `serve` refuses the same file with the same report.
    let (status, stderr) = Server::start_failing(&std::fs::read_to_string(&file).unwrap(), &[]);
    assert!(!status.success());
    assert!(stderr.contains("error: adapters.clock.tools.utc_now.timeout_ms: invalid type"), "{stderr}");
}

#[test]
fn check_lists_the_tools_warns_on_none_and_checks_offline_and_the_default() {
    let out = run(&["check"], &[("RUST_LOG", "warn")]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let listing = text(&out.stdout);
    assert!(listing.starts_with("<embedded default.toml>: ok (2 adapters; 4 tools,"), "{listing}");
    for row in ["echo", "add", "greet"] {
        assert!(listing.lines().any(|l| l.split_whitespace().eq([row, "demo", "fixtures"])), "{row}: {listing}");
    }

    let dir = tempfile::tempdir().unwrap();
    let empty = write(&dir, "empty.toml", "[server]\nname = \"nothing\"\n");
    let out = run(&["--config", &empty, "check"], &[("RUST_LOG", "warn")]);
    assert!(out.status.success());
    assert!(
        text(&out.stderr).contains("warning: ") && text(&out.stderr).contains("declares no tools"),
        "{}",
        text(&out.stderr)
    );

    // A build machine has neither the program nor the secret: --offline checks the file alone.
    let needs = write(
        &dir,
        "needs.toml",
        "[[request_state.keys]]\nid = \"k1\"\nsecret_env = \"MCP_KEY_UNSET\"\n\n[[adapters]]\nname = \"git\"\nkind = \"cli\"\n\n[[adapters.tools]]\nname = \"git_log\"\ndescription = \"Recent commits.\"\nexecutable = \"no-such-program-4711\"\n",
    );
    let online = run(&["--config", &needs, "check"], &[("RUST_LOG", "warn")]);
    assert!(!online.status.success(), "{}", text(&online.stdout));
    assert!(text(&online.stderr).contains("MCP_KEY_UNSET"), "{}", text(&online.stderr));
    let offline = run(&["--config", &needs, "check", "--offline"], &[]);
    assert!(offline.status.success(), "{}", text(&offline.stderr));
    assert!(text(&offline.stdout).contains("ok offline"), "{}", text(&offline.stdout));
}

#[test]
fn config_without_serve_serves_that_file() {
    use std::io::BufRead as _;
    let dir = tempfile::tempdir().unwrap();
    let file = write(&dir, "c.toml", "[server]\nname = \"from-the-file\"\nlisten = \"127.0.0.1:0\"\n");
    let mut child = Command::new(paths::runtime_bin())
        .args(["--config", &file])
        .env_clear()
        .env("RUST_LOG", "warn")
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("spawn");
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(line.starts_with("mcp-runtime listening on http://127.0.0.1:"), "{line}");
}

/// Demo and faults tools; `add` may be called once.
fn calls_config() -> String {
    format!("{}\n[rate_limits.tools.add]\nglobal = {{ rate = 1, per_ms = 600000 }}\n", mcp_e2e::FIXTURES_CONFIG)
}

#[tokio::test]
async fn every_call_logs_one_info_line_with_its_outcome() {
    let server = Server::start_with(&calls_config(), &[("RUST_LOG", "warn,mcp_runtime::call=info")]);
    let mcp = server.mcp();
    assert_eq!(mcp.tool("echo", json!({"text": "hi"})).await.text(0), "hi");
    assert!(mcp.tool("add", json!({"a": 1, "b": 2})).await.error_code().is_none());
    assert!(mcp.tool("add", json!({"a": 1, "b": 2})).await.error_code().is_some(), "the second add is rate-limited");
    let _ = mcp.tool("fail_backend", json!({})).await;
    let _ = mcp.tool("no_such_tool", json!({})).await;
    let lines = eventually(
        Duration::from_secs(5),
        || format!("five call lines:\n{}", server.stderr()),
        || {
            let log = server.stderr();
            let lines: Vec<String> =
                log.lines().filter(|l| l.contains("mcp_runtime::call")).map(str::to_owned).collect();
            std::future::ready((lines.len() >= 5).then_some(lines))
        },
    )
    .await;
    assert_eq!(lines.len(), 5, "{lines:#?}");
    let line = |i: usize| lines[i].as_str();
    for l in &lines {
        assert!(l.contains(" INFO ") && l.contains("method=\"tools/call\""), "{l}");
        assert!(l.contains("duration_ms=") && l.contains("request_id=") && l.contains("caller=\"-\""), "{l}");
        assert!(!l.contains('\u{1b}'), "no ANSI colours on a pipe: {l:?}");
    }
    assert!(line(0).contains("name=\"echo\"") || line(0).contains("name=echo"), "{}", line(0));
    assert!(line(0).contains("outcome=\"ok\"") || line(0).contains("outcome=ok"), "{}", line(0));
    assert!(!line(0).contains("error="), "{}", line(0));
    assert!(line(2).contains("rate_limited") && line(2).contains("error="), "{}", line(2));
    // A backend failure is a tool error whose reason is the tool's own text.
    assert!(line(3).contains("fail_backend") && line(3).contains("outcome=\"tool_error\""), "{}", line(3));
    assert!(line(3).contains("error=") && line(3).contains("503"), "{}", line(3));
    assert!(
        line(4).contains("no_such_tool") && line(4).contains("protocol_error") && line(4).contains("error="),
        "{}",
        line(4)
    );
}

#[tokio::test]
async fn a_refused_host_is_logged_with_the_setting_and_a_wide_listener_warns() {
    let server = Server::start_on(mcp_e2e::FIXTURES_CONFIG, &[], "0.0.0.0:0");
    let mcp = server.mcp();
    let body = mcp.body("tools/list", json!({}));
    let answer = mcp.send(&body, &[("host", Some("mcp.example.com"))]).await;
    assert_eq!(answer.status, 403);
    let log = eventually(
        Duration::from_secs(5),
        || format!("the refused host is logged:\n{}", server.stderr()),
        || {
            let log = server.stderr();
            std::future::ready(log.contains("mcp.example.com").then_some(log))
        },
    )
    .await;
    assert!(log.contains("server.allowed_hosts") && log.contains("MCP_RUNTIME__SERVER__ALLOWED_HOSTS"), "{log}");
    assert!(log.contains("listening beyond loopback"), "{log}");
}

#[tokio::test]
async fn reload_outcomes_are_counted() {
    let server = Server::start(mcp_e2e::FIXTURES_CONFIG);
    let metrics = format!("http://{}/metrics", server.addr);
    let count = |text: &str, outcome: &str| {
        let series = format!("mcp_config_reloads_total{{outcome=\"{outcome}\"}} ");
        text.lines().find_map(|l| l.strip_prefix(series.as_str())).map(str::to_owned)
    };
    let text = reqwest::get(&metrics).await.unwrap().text().await.unwrap();
    assert_eq!((count(&text, "ok").as_deref(), count(&text, "error").as_deref()), (Some("0"), Some("0")), "{text}");

    std::fs::write(&server.config_path, "[server]\npage_size = 0\n").unwrap();
    server.signal("HUP");
    let seen = eventually(
        Duration::from_secs(5),
        || "a rejected reload counted".to_owned(),
        || async {
            let text = reqwest::get(&metrics).await.ok()?.text().await.ok()?;
            (count(&text, "error").as_deref() == Some("1")).then_some(text)
        },
    )
    .await;
    assert_eq!(count(&seen, "ok").as_deref(), Some("0"));

    std::fs::write(&server.config_path, mcp_e2e::FIXTURES_CONFIG).unwrap();
    server.signal("HUP");
    eventually(
        Duration::from_secs(5),
        || "a good reload counted".to_owned(),
        || async {
            let text = reqwest::get(&metrics).await.ok()?.text().await.ok()?;
            (count(&text, "ok").as_deref() == Some("1")).then_some(())
        },
    )
    .await;
}
