//! What a person touches first, as a person uses it: `check` and `serve` on broken files (one
//! validation, every stage's problems in one run, each at its key), the command line's own
//! errors (a closed pipe, `--listen` without `serve`, a port in use), and what a rejected
//! reload says in the log.

use std::io::Read as _;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use mcp_e2e::{Server, paths};
use serde_json::json;

fn run_in(cwd: &std::path::Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    mcp_e2e::run(Some(cwd), args, env)
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The `error: <key>: ...` lines of a report, in order.
fn problem_lines(report: &str) -> Vec<String> {
    report.lines().filter(|l| l.starts_with("error: ") && !l.contains(" has ")).map(str::to_owned).collect()
}

/// A file with a mistake at every stage: the server section, two tools of one CLI adapter
/// (an unknown key, an invalid schema, a program that is not installed) and a REST adapter.
const FIVE_MISTAKES: &str = r#"[server]
page_size = 0

[[adapters]]
name = "text"
kind = "cli"

[[adapters.tools]]
name = "echo"
description = "Echoes."
executable = "cat"
stdn = "text"
input_schema = { type = "object", properties = { text = { type = "strng" } } }

[[adapters.tools]]
name = "count"
description = "Counts."
executable = "no-such-program-4711"

[[adapters]]
name = "api"
kind = "rest"
base_urls = ["http://127.0.0.1:9"]

[[adapters.tools]]
name = "get_user"
description = "A user."
path = "/users/{login}"
"#;

#[test]
fn check_and_serve_report_the_same_problems_of_every_stage_in_one_run() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("five.toml"), FIVE_MISTAKES).unwrap();
    let check = run_in(dir.path(), &["--config", "five.toml", "check"], &[]);
    assert_eq!(check.status.code(), Some(1));
    let report = text(&check.stderr);
    let problems = problem_lines(&report);
    let keys: Vec<&str> =
        problems.iter().map(|l| l.trim_start_matches("error: ").split(": ").next().unwrap()).collect();
    assert_eq!(
        keys,
        [
            "server.page_size",
            "adapters.text.tools.echo.stdn",
            "adapters.text.tools.echo.input_schema.properties.text.type",
            "adapters.text.tools.count.executable",
            "adapters.api.tools.get_user.path",
        ],
        "{report}"
    );
    assert!(report.ends_with("error: five.toml has 5 problems\n"), "{report}");
    // `serve` stops at the same problems, word for word, before it listens.
    let serve = run_in(dir.path(), &["--config", "five.toml", "serve", "--listen", "127.0.0.1:0"], &[]);
    assert_eq!(serve.status.code(), Some(1));
    assert_eq!(problem_lines(&text(&serve.stderr)), problems);
    assert!(text(&serve.stdout).is_empty(), "nothing listened: {}", text(&serve.stdout));
}

#[test]
fn offline_checks_every_key_and_schema_and_skips_only_what_is_outside_the_file() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("five.toml"), FIVE_MISTAKES).unwrap();
    let out = run_in(dir.path(), &["--config", "five.toml", "check", "--offline"], &[]);
    assert_eq!(out.status.code(), Some(1));
    let report = text(&out.stderr);
    let problems = problem_lines(&report);
    // Everything but the program that is not installed here.
    assert_eq!(problems.len(), 4, "{report}");
    assert!(!report.contains("no-such-program-4711"), "{report}");
    assert!(report.contains("adapters.text.tools.echo.stdn: unknown key"), "{report}");
    assert!(report.contains("`strng` is not a JSON Schema type"), "{report}");
}

#[test]
fn a_schema_problem_points_inside_the_schema_and_an_unknown_key_at_the_key() {
    let dir = tempfile::tempdir().unwrap();
    let config = "[[adapters]]\nname = \"text\"\nkind = \"cli\"\n\n[[adapters.tools]]\nname = \"echo\"\ndescription = \"Echoes.\"\nexecutable = \"cat\"\nstdn = \"text\"\ninput_schema = { type = \"object\", properties = { text = { type = \"strng\" } } }\n";
    std::fs::write(dir.path().join("c.toml"), config).unwrap();
    let out = run_in(dir.path(), &["--config", "c.toml", "check", "--offline"], &[]);
    assert_eq!(
        text(&out.stderr),
        "error: adapters.text.tools.echo.stdn: unknown key
 --> c.toml:9:1
  |
9 | stdn = \"text\"
  | ^^^^
  = help: did you mean `stdin`?

error: adapters.text.tools.echo.input_schema.properties.text.type: `strng` is not a JSON Schema type; expected one of array, boolean, integer, null, number, object, string
  --> c.toml:10:66
   |
10 | input_schema = { type = \"object\", properties = { text = { type = \"strng\" } } }
   |                                                                  ^^^^^^^
   = help: did you mean `string`?

error: c.toml has 2 problems
"
    );
}

/// A self-signed certificate and its key, written as PEM into `dir` under `name`.pem.
fn certificate(dir: &std::path::Path, name: &str) {
    let key = rcgen::KeyPair::generate().unwrap();
    let cert = rcgen::CertificateParams::new(vec!["localhost".to_owned()]).unwrap().self_signed(&key).unwrap();
    std::fs::write(dir.join(format!("{name}-cert.pem")), cert.pem()).unwrap();
    std::fs::write(dir.join(format!("{name}-key.pem")), key.serialize_pem()).unwrap();
}

#[test]
fn check_loads_the_tls_files_as_serve_does_from_the_config_folder() {
    let dir = tempfile::tempdir().unwrap();
    let conf = dir.path().join("conf");
    std::fs::create_dir_all(conf.join("tls")).unwrap();
    certificate(&conf.join("tls"), "a");
    certificate(&conf.join("tls"), "b");
    let tls = |cert: &str, key: &str| format!("[tls]\ncert_file = \"tls/{cert}\"\nkey_file = \"tls/{key}\"\n");
    let elsewhere = tempfile::tempdir().unwrap();
    let check = |name: &str, body: String| {
        std::fs::write(conf.join(name), body).unwrap();
        let path = conf.join(name).display().to_string();
        // Run from another folder: relative paths start at the config file's folder.
        run_in(elsewhere.path(), &["--config", &path, "check"], &[])
    };
    let ok = check("ok.toml", tls("a-cert.pem", "a-key.pem"));
    assert!(ok.status.success(), "{}", text(&ok.stderr));

    let cases = [
        (tls("a-cert.pem", "b-key.pem"), "b-key.pem is not the private key of the certificate in tls.cert_file"),
        (tls("a-cert.pem", "missing.pem"), "tls.key_file: cannot read "),
        (tls("a-cert.pem", "a-cert.pem"), "a-cert.pem is not a PEM private key"),
        (tls("a-key.pem", "a-key.pem"), "tls.cert_file: "),
    ];
    for (i, (body, words)) in cases.into_iter().enumerate() {
        let name = format!("bad{i}.toml");
        let out = check(&name, body.clone());
        let report = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{body}: {report}");
        assert!(report.contains(words), "{body}: {report}");
        // The path tried is the resolved one, inside the config's folder.
        assert!(report.contains(&conf.join("tls").display().to_string()), "{report}");
        assert!(!report.contains("KeyMismatch") && !report.contains("InconsistentKeys"), "{report}");
        let located = format!(" --> {}:", conf.join(&name).display());
        assert!(report.contains(&located), "located: {report}");
        // `serve` stops at the same problem.
        let served = run_in(elsewhere.path(), &["--config", &conf.join(&name).display().to_string()], &[]);
        assert_eq!(problem_lines(&text(&served.stderr)), problem_lines(&report));
    }
}

#[test]
fn check_prints_its_report_only() {
    let dir = tempfile::tempdir().unwrap();
    let out = run_in(dir.path(), &["check"], &[("RUST_LOG", "info")]);
    assert!(out.status.success());
    assert_eq!(text(&out.stderr), "", "no log line, even at info");
    let report = text(&out.stdout);
    assert!(
        report.starts_with(
            "<embedded default.toml>: ok (2 adapters; 4 tools, 1 resource, 0 resource templates, 1 prompt)\n"
        ),
        "{report}"
    );
    assert!(!report.contains("Registry") && !report.contains('{'), "no Debug output: {report}");
    // A typo: the report alone, on stderr.
    std::fs::write(dir.path().join("t.toml"), "[servr]\nname = \"x\"\n").unwrap();
    let out = run_in(dir.path(), &["--config", "t.toml", "check"], &[("RUST_LOG", "info")]);
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(err.starts_with("error: servr: unknown key `servr`\n"), "{err}");
    assert!(!err.contains(" INFO ") && !err.contains(" WARN "), "{err}");
}

#[test]
fn a_closed_pipe_ends_a_command_quietly() {
    let mut child = Command::new(paths::runtime_bin())
        .arg("config-schema")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = [0u8; 16];
    child.stdout.as_mut().unwrap().read_exact(&mut first).unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{:?}", out.status);
    assert!(!text(&out.stderr).contains("panicked"), "{}", text(&out.stderr));
}

#[test]
fn listen_needs_no_serve_and_a_port_in_use_says_what_to_do() {
    let holder = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let taken = holder.local_addr().unwrap().to_string();
    let dir = tempfile::tempdir().unwrap();
    let out = run_in(dir.path(), &["--listen", &taken], &[]);
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(err.contains(&format!("--listen: cannot listen on {taken}")), "{err}");
    assert!(err.contains("another mcp-runtime (or another program) is listening there"), "{err}");
    // From the file, the message names the key instead.
    std::fs::write(dir.path().join("c.toml"), format!("[server]\nlisten = \"{taken}\"\n")).unwrap();
    let out = run_in(dir.path(), &["--config", "c.toml"], &[]);
    assert!(text(&out.stderr).contains(&format!("server.listen: cannot listen on {taken}")), "{}", text(&out.stderr));
    // `--listen` belongs to serving.
    let out = run_in(dir.path(), &["--listen", &taken, "check"], &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("--listen is an option of `serve`"), "{}", text(&out.stderr));
}

#[tokio::test]
async fn a_rejected_reload_is_logged_with_its_place_and_an_accepted_one_with_what_changed() {
    let server = Server::start_with(mcp_e2e::FIXTURES_CONFIG, &[("RUST_LOG", "info")]);
    let path = server.config_path.display().to_string();
    let broken = format!(
        "{}\n[[adapters]]\nname = \"x\"\nkind = \"cli\"\n\n[[adapters.tools]]\nname = \"x\"\ndescription = \"X.\"\nexecutable = \"cat\"\nstdn = \"text\"\n",
        mcp_e2e::FIXTURES_CONFIG
    );
    let line = broken.lines().position(|l| l.starts_with("stdn")).unwrap() + 1;
    std::fs::write(&server.config_path, &broken).unwrap();
    server.signal("HUP");
    let rejected = server.log_line("configuration rejected").await;
    assert!(rejected.contains(&format!("{path}:{line}:1: adapters.x.tools.x.stdn: unknown key")), "{rejected}");
    assert!(rejected.contains("did you mean `stdin`?"), "{rejected}");

    let policy = format!("{}\n[tool_policies.echo]\nconfirm = true\n", mcp_e2e::FIXTURES_CONFIG);
    std::fs::write(&server.config_path, policy).unwrap();
    server.signal("HUP");
    let reloaded = server.log_line("configuration reloaded").await;
    assert!(reloaded.contains("changed=tool_policies"), "{reloaded}");
    // The policy took effect: echo now asks for confirmation.
    let answer =
        server.mcp().with_capabilities(json!({"elicitation": {"form": {}}})).tool("echo", json!({"text": "hi"})).await;
    assert_eq!(answer.result()["resultType"], "input_required", "{:?}", answer.message());
    tokio::time::sleep(Duration::from_millis(10)).await;
}

#[tokio::test]
async fn two_authorization_headers_are_a_bad_request() {
    let config = format!(
        "{}\n[auth]\n[[auth.tokens]]\nsubject = \"ada\"\nsecret = \"token-of-ada-0123456789\"\n",
        mcp_e2e::FIXTURES_CONFIG
    );
    let server = Server::start(&config);
    let mcp = server.mcp();
    let body = mcp.body("tools/list", json!({}));
    let conforming = mcp_e2e::Mcp::headers_for(&body);
    let send = async |authorizations: Vec<&'static [u8]>| {
        let mut headers: Vec<(&str, &[u8])> = conforming.iter().map(|(n, v)| (n.as_str(), v.as_bytes())).collect();
        headers.extend(authorizations.into_iter().map(|a| ("authorization", a)));
        mcp.post_raw(serde_json::to_vec(&body).unwrap(), &headers).await
    };
    let good: &'static [u8] = b"Bearer token-of-ada-0123456789";
    assert_eq!(send(vec![good]).await.status, 200);
    for second in [good, b"garbage" as &'static [u8]] {
        let two = send(vec![good, second]).await;
        assert_eq!(two.status, 400, "{:?}", two.messages);
        assert!(two.error_message().contains("more than one Authorization header"), "{:?}", two.messages);
    }
}

#[tokio::test]
async fn a_dead_rest_upstream_is_named_with_its_adapter() {
    let dead = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    let server = Server::start(&format!(
        "[[adapters]]\nname = \"users\"\nkind = \"rest\"\nbase_urls = [\"http://{dead}\"]\nretry = {{ max_attempts = 1 }}\n\n[[adapters.tools]]\nname = \"get_user\"\ndescription = \"A user.\"\npath = \"/users\"\n"
    ));
    let answer = server.mcp().tool("get_user", json!({})).await;
    assert_eq!(answer.result()["isError"], true, "{:?}", answer.messages);
    let text = answer.text(0);
    assert!(
        text.starts_with(&format!("Tool failed in adapter 'users': http://{dead} unreachable (1 attempt): ")),
        "{text}"
    );
}

#[tokio::test]
async fn a_program_killed_by_a_signal_is_named_and_a_missing_one_keeps_its_path_in_the_log() {
    let dir = tempfile::tempdir().unwrap();
    let crash = mcp_e2e::procs::script(dir.path(), "crash", "kill -SEGV $$").display().to_string();
    let gone = mcp_e2e::procs::script(dir.path(), "gone", "echo hi").display().to_string();
    let server = Server::start(&format!(
        "[[adapters]]\nname = \"progs\"\nkind = \"cli\"\n\n[[adapters.tools]]\nname = \"crash\"\ndescription = \"Crashes.\"\nexecutable = \"{crash}\"\n\n[[adapters.tools]]\nname = \"gone\"\ndescription = \"Removed after start-up.\"\nexecutable = \"{gone}\"\n"
    ));
    let mcp = server.mcp();
    let crashed = mcp.tool("crash", json!({})).await;
    assert_eq!(crashed.result()["isError"], true, "{:?}", crashed.messages);
    assert!(crashed.text(0).starts_with("The command was killed by SIGSEGV (signal 11)."), "{}", crashed.text(0));

    std::fs::remove_file(&gone).unwrap();
    let failed = mcp.tool("gone", json!({})).await;
    let text = failed.text(0);
    assert_eq!(failed.result()["isError"], true, "{:?}", failed.messages);
    assert!(text.contains("the program of tool 'gone' could not be started"), "{text}");
    assert!(!text.contains(&dir.path().display().to_string()), "the caller does not learn the path: {text}");
    let logged = server.log_line("cannot start the tool's program").await;
    assert!(logged.contains(&gone), "the operator does: {logged}");
}
