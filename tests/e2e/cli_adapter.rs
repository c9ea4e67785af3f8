//! The CLI adapter with real child processes: hostile argument values reach the program as
//! inert single argv entries or are refused, only allow-listed variables reach it, timeouts
//! and disconnects leave no process behind, and output, exit codes, JSON and progress map as
//! documented. Helper programs are shell scripts the tests write (a test may use a shell;
//! the adapter never does).

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use mcp_e2e::adapter_conformance::{self, AdapterUnderTest};
use mcp_e2e::procs::{processes_with, script, unique_seconds, zombie_children};
use mcp_e2e::schema::{assert_response, assert_valid};
use mcp_e2e::wait::until;
use mcp_e2e::{Answer, Server, paths};
use serde_json::{Value, json};

/// Waits up to 5 s for the runtime to have no zombie children.
async fn eventually_no_zombies(s: &Server) {
    let pid = s.pid();
    until(
        Duration::from_secs(5),
        || format!("the runtime left zombie children: {:?}", zombie_children(pid)),
        || zombie_children(pid).is_empty(),
    )
    .await;
}

/// The argv a `show-args` script received (it prints each entry followed by NUL).
fn argv(a: &Answer) -> Vec<String> {
    assert_eq!(a.result()["isError"], Value::Null, "{:?}", a.messages);
    let out = a.text(0);
    let mut entries: Vec<String> = out.split('\0').map(str::to_owned).collect();
    assert_eq!(entries.pop().as_deref(), Some(""), "output ends with NUL: {out:?}");
    entries
}

fn refused_field(a: &Answer) -> String {
    assert_eq!(a.error_code(), Some(-32602), "{:?}", a.messages);
    assert_response("tools/call", a.message());
    a.message()["error"]["data"]["field"].as_str().expect("the refusal names the field").to_owned()
}

#[tokio::test]
async fn hostile_values_arrive_as_single_inert_arguments_or_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let show = script(dir.path(), "show-args", "/usr/bin/printf '%s\\0' \"$@\"");
    // Files a shell would expand `*` to, and that injected commands would create.
    std::fs::write(dir.path().join("a.txt"), "").unwrap();
    let d = dir.path().display();
    let schema = r#"{ type = "object", required = ["value"], properties = { value = { type = "string" } } }"#;
    let s = Server::start(&format!(
        r#"
[[adapters]]
name = "argv"
kind = "cli"

[[adapters.tools]]
name = "show"
description = "Prints its argv"
executable = "{show}"
args = ["{{value}}"]
working_dir = "{d}"
input_schema = {schema}

[[adapters.tools]]
name = "show_operand"
description = "Prints its argv; the value comes after --"
executable = "{show}"
args = ["--flag", "--", "{{value}}"]
input_schema = {schema}

[[adapters.tools]]
name = "show_allowed"
description = "Prints its argv; this value may start with a dash"
executable = "{show}"
args = ["-e", "{{value}}"]
allow_leading_dash = ["value"]
input_schema = {schema}

[[adapters.tools]]
name = "show_each"
description = "Prints its argv, one entry per item"
executable = "{show}"
args = ["--files", {{ each = "items", then = ["{{items}}"] }}]
input_schema = {{ type = "object", properties = {{ items = {{ type = "array", items = {{ type = "string" }} }} }} }}
"#,
        show = show.display()
    ));
    let mcp = s.mcp();

    let hostile = [
        "; rm -rf /".to_owned(),
        format!("; touch {d}/pwned"),
        format!("$(touch {d}/pwned)"),
        format!("`touch {d}/pwned`"),
        format!("x && touch {d}/pwned"),
        "*".to_owned(),
        "a.txt *.txt ~".to_owned(),
        "line one\nline two".to_owned(),
        "'quoted' \"double\" \\back".to_owned(),
        "$HOME ${PATH}".to_owned(),
        String::new(),
    ];
    for value in &hostile {
        let a = mcp.tool("show", json!({ "value": value })).await;
        assert_response("tools/call", a.message());
        assert_eq!(argv(&a), [value.as_str()], "value {value:?}");
    }
    assert!(!dir.path().join("pwned").exists(), "an injected command ran");

    // Option-looking values: refused where the program could read them as options...
    for value in ["--output=/etc/passwd", "-rf", "-"] {
        assert_eq!(refused_field(&mcp.tool("show", json!({ "value": value })).await), "value", "{value}");
    }
    // ... and passed as operands after a literal `--`, or where the tool allows it.
    let a = mcp.tool("show_operand", json!({"value": "--output=/etc/passwd"})).await;
    assert_eq!(argv(&a), ["--flag", "--", "--output=/etc/passwd"]);
    assert_eq!(argv(&mcp.tool("show_allowed", json!({"value": "-v"})).await), ["-e", "-v"]);

    // NUL cannot be part of an argv entry: refused, naming the field.
    assert_eq!(refused_field(&mcp.tool("show", json!({"value": "a\u{0}b"})).await), "value");
    assert_eq!(refused_field(&mcp.tool("show_operand", json!({"value": "\u{0}"})).await), "value");

    // Arrays: one entry per item, each inert; a bad item is named with its index.
    let a = mcp.tool("show_each", json!({"items": ["a b", "$(id)", "*"]})).await;
    assert_eq!(argv(&a), ["--files", "a b", "$(id)", "*"]);
    assert_eq!(argv(&mcp.tool("show_each", json!({})).await), ["--files"]);
    assert_eq!(refused_field(&mcp.tool("show_each", json!({"items": ["ok", "--all"]})).await), "items.1");
}

#[tokio::test]
async fn only_allow_listed_variables_reach_the_child() {
    let s = Server::start_with(
        r#"
[[adapters]]
name = "envs"
kind = "cli"

[[adapters.tools]]
name = "show_env"
description = "Prints its environment"
executable = "env"
args = ["-0"]
env_allow = ["ALLOWED_VAR", "ALLOWED_BUT_UNSET"]
env = { FIXED = "fixed value" }

[[adapters.tools]]
name = "show_env_loader"
description = "Prints its environment, with a loader variable allowed on purpose"
executable = "env"
args = ["-0"]
env_allow = ["PYTHONPATH"]
allow_loader_env = true
"#,
        &[
            ("ALLOWED_VAR", "visible"),
            ("SECRET_TOKEN", "hunter2"),
            ("AWS_SECRET_ACCESS_KEY", "wJalrXUtnFEMI/K7MDENG"),
            ("DATABASE_URL", "postgres://admin:pw@db/prod"),
            ("MCP_RUNTIME__SERVER__NAME", "from-env"),
            ("PYTHONPATH", "/opt/lib/python"),
            ("HOME", "/root"),
        ],
    );
    let mcp = s.mcp();
    let env_of = |a: &Answer| -> BTreeSet<String> {
        assert_eq!(a.result()["isError"], Value::Null, "{:?}", a.messages);
        a.text(0).split('\0').filter(|v| !v.is_empty()).map(str::to_owned).collect()
    };
    let got = env_of(&mcp.tool("show_env", json!({})).await);
    assert_eq!(got, BTreeSet::from(["ALLOWED_VAR=visible".to_owned(), "FIXED=fixed value".to_owned()]));
    // PATH is in the runtime's environment too, and is not passed either.
    let got = env_of(&mcp.tool("show_env_loader", json!({})).await);
    assert_eq!(got, BTreeSet::from(["PYTHONPATH=/opt/lib/python".to_owned()]));
}

#[test]
fn start_up_refuses_loader_variables_and_missing_programs_naming_the_key() {
    let tool = |extra: &str| {
        format!(
            "[[adapters]]\nname = \"tb\"\nkind = \"cli\"\n[[adapters.tools]]\nname = \"t\"\ndescription = \"d\"\n{extra}\n"
        )
    };
    let refused = [
        ("executable = \"env\"\nenv_allow = [\"LD_PRELOAD\"]", "adapters.tb.tools.t.env_allow", "LD_PRELOAD"),
        (
            "executable = \"env\"\nenv = { NODE_OPTIONS = \"--require x\" }",
            "adapters.tb.tools.t.env.NODE_OPTIONS",
            "allow_loader_env",
        ),
        ("executable = \"no-such-program-4711\"", "adapters.tb.tools.t.executable", "not found on PATH"),
        ("executable = \"env\"\nargs = [\"{nope}\"]", "adapters.tb.tools.t.args[0]", "names no property"),
        ("executable = \"env\"\ntimeout = 5", "adapters.tb.tools.t.timeout", "unknown key"),
    ];
    for (extra, key, problem) in refused {
        let (status, stderr) = Server::start_failing(&tool(extra), &[("LD_PRELOAD", "")]);
        assert!(!status.success(), "{extra}: started");
        assert!(stderr.contains(&format!("{key}:")) && stderr.contains(problem), "{extra}: {stderr}");
    }
}

#[tokio::test]
async fn a_timed_out_call_is_a_tool_error_and_leaves_no_process_behind() {
    let dir = tempfile::tempdir().unwrap();
    // A tree: a background grandchild and a foreground child, both sleeping.
    let tree = script(dir.path(), "sleep-tree", "sleep \"$1\" &\nsleep \"$1\"\nwait");
    let s = Server::start(&format!(
        r#"
[[adapters]]
name = "sleepers"
kind = "cli"

[[adapters.tools]]
name = "sleep"
description = "Sleeps"
executable = "sleep"
args = ["{{seconds}}"]
timeout_ms = 1000
input_schema = {{ type = "object", required = ["seconds"], properties = {{ seconds = {{ type = "string" }} }} }}

[[adapters.tools]]
name = "sleep_tree"
description = "Sleeps in two processes"
executable = "{tree}"
args = ["{{seconds}}"]
timeout_ms = 1000
input_schema = {{ type = "object", required = ["seconds"], properties = {{ seconds = {{ type = "string" }} }} }}
"#,
        tree = tree.display()
    ));
    let mcp = s.mcp();
    for tool in ["sleep", "sleep_tree"] {
        let marker = unique_seconds(60);
        let started = Instant::now();
        let a = mcp.tool(tool, json!({ "seconds": marker })).await;
        let took = started.elapsed();
        assert_response("tools/call", a.message());
        assert_eq!(a.result()["isError"], true, "{:?}", a.messages);
        assert!(a.text(0).contains("timed out"), "{:?}", a.messages);
        assert!(took >= Duration::from_millis(950) && took < Duration::from_millis(2500), "{tool}: {took:?}");
        let survived = || format!("{tool}: a process with {marker} survived");
        until(Duration::from_secs(5), survived, || processes_with(&marker).is_empty()).await;
    }
    eventually_no_zombies(&s).await;
}

#[tokio::test]
async fn output_cap_exit_codes_and_json_results() {
    let dir = tempfile::tempdir().unwrap();
    let fail = script(dir.path(), "fail", "echo 'partial output'\necho 'something went wrong' >&2\nexit 3");
    let s = Server::start(&format!(
        r#"
[[adapters]]
name = "results"
kind = "cli"

[[adapters.tools]]
name = "count"
description = "Counts from 1 to n"
executable = "seq"
args = ["1", "{{n}}"]
max_output_bytes = 100
input_schema = {{ type = "object", required = ["n"], properties = {{ n = {{ type = "integer", minimum = 1 }} }} }}

[[adapters.tools]]
name = "fail"
description = "Fails with exit code 3"
executable = "{fail}"

[[adapters.tools]]
name = "json"
description = "Prints {{\"n\": <raw>}}"
executable = "printf"
args = ['{{{{"n": %s}}}}', "{{raw}}"]
output = "json"
output_schema = {{ type = "object", required = ["n"], properties = {{ n = {{ type = "integer" }} }} }}
input_schema = {{ type = "object", required = ["raw"], properties = {{ raw = {{ type = "string" }} }} }}
"#,
        fail = fail.display()
    ));
    let mcp = s.mcp();

    let a = mcp.tool("count", json!({"n": 100_000})).await;
    assert_response("tools/call", a.message());
    assert_eq!(a.result()["isError"], Value::Null);
    let shown = a.text(0);
    assert_eq!(shown.len(), 100);
    assert!(shown.starts_with("1\n2\n3\n"));
    assert!(a.text(1).contains("wrote 588895 bytes; only the first 100 are shown"), "{:?}", a.messages);

    let a = mcp.tool("fail", json!({})).await;
    assert_response("tools/call", a.message());
    assert_eq!(a.result()["isError"], true);
    let summary = a.text(0);
    assert!(summary.contains("exit code 3") && summary.contains("something went wrong"), "{summary}");
    assert!(a.text(1).contains("partial output"));

    let a = mcp.tool("json", json!({"raw": "42"})).await;
    assert_response("tools/call", a.message());
    assert_eq!(a.result()["structuredContent"], json!({"n": 42}));
    assert_eq!(serde_json::from_str::<Value>(&a.text(0)).unwrap(), json!({"n": 42}));
    for (raw, why) in [("\"forty-two\"", "output schema"), ("oops", "not JSON")] {
        let a = mcp.tool("json", json!({ "raw": raw })).await;
        assert_response("tools/call", a.message());
        assert_eq!(a.result()["isError"], true, "{raw}");
        assert!(a.text(0).contains(why), "{raw}: {:?}", a.messages);
    }
}

#[tokio::test]
async fn stderr_progress_streams_over_sse_when_asked() {
    let dir = tempfile::tempdir().unwrap();
    let work = script(
        dir.path(),
        "work",
        "for i in 1 2 3; do echo \"step $i/3 chunk $i\" >&2; echo noise >&2; sleep 0.1; done\necho done",
    );
    let s = Server::start(&format!(
        r#"
[[adapters]]
name = "progress"
kind = "cli"

[[adapters.tools]]
name = "work"
description = "Works in three steps"
executable = "{work}"
progress_pattern = '^step (?P<progress>\d+)/(?P<total>\d+) (?P<message>.*)$'
"#,
        work = work.display()
    ));
    let mcp = s.mcp();
    let a = mcp.call("tools/call", json!({"name": "work", "arguments": {}, "_meta": {"progressToken": "tok-1"}})).await;
    assert_eq!((a.status, a.content_type()), (200, "text/event-stream"));
    let progress: Vec<&Value> = a.notifications();
    for n in &progress {
        assert_valid("ProgressNotification", n);
        assert_eq!(n["params"]["progressToken"], "tok-1");
    }
    let values: Vec<(f64, f64, &str)> = progress
        .iter()
        .map(|n| {
            let p = &n["params"];
            (p["progress"].as_f64().unwrap(), p["total"].as_f64().unwrap(), p["message"].as_str().unwrap())
        })
        .collect();
    assert_eq!(values, [(1.0, 3.0, "chunk 1"), (2.0, 3.0, "chunk 2"), (3.0, 3.0, "chunk 3")]);
    assert_response("tools/call", a.message());
    assert_eq!(a.text(0), "done\n");

    // Without a progressToken the same call answers plain JSON.
    let a = mcp.tool("work", json!({})).await;
    assert_eq!((a.status, a.content_type()), (200, "application/json"));
    assert_eq!(a.text(0), "done\n");
}

#[tokio::test]
async fn the_cli_adapter_passes_the_shared_adapter_conformance_check() {
    let dir = tempfile::tempdir().unwrap();
    let counter = dir.path().join("runs");
    std::fs::write(&counter, "").unwrap();
    // Counts its runs, then sleeps in two processes whose argv carries the marker (the
    // background one is only reached by killing the group).
    let slow = script(dir.path(), "slow", "echo run >> \"$COUNTER\"\nsleep \"$1\" &\nsleep \"$1\"\nwait");
    let marker = unique_seconds(30);
    let s = Server::start(&format!(
        r#"
[[adapters]]
name = "conformance"
kind = "cli"

[[adapters.tools]]
name = "slow"
description = "Records that it ran, then sleeps"
executable = "{slow}"
args = ["{{seconds}}"]
env = {{ COUNTER = "{counter}" }}
timeout_ms = 1000
input_schema = {{ type = "object", required = ["seconds"], properties = {{ seconds = {{ type = "string", pattern = "^[0-9]+(\\.[0-9]+)?$" }} }} }}
"#,
        slow = slow.display(),
        counter = counter.display()
    ));
    let executions = || std::fs::read_to_string(&counter).unwrap().lines().count();
    let stopped = || processes_with(&marker).is_empty();
    adapter_conformance::check(AdapterUnderTest {
        mcp: s.mcp(),
        tools: &["slow"],
        bad_call: ("slow", json!({"seconds": "; rm -rf /"})),
        executions: &executions,
        slow_call: ("slow", json!({ "seconds": marker }), Duration::from_secs(1)),
        stopped: &stopped,
    })
    .await;
    eventually_no_zombies(&s).await;
}

#[tokio::test]
async fn the_shipped_configs_run_as_they_are() {
    let toolbox = std::fs::read_to_string(paths::repo().join("service/config/examples/cli-toolbox.toml")).unwrap();
    let s = Server::start(&toolbox);
    let mcp = s.mcp();
    let call = |name: &'static str, args: Value| {
        let mcp = mcp.clone();
        async move {
            let a = mcp.tool(name, args).await;
            assert_response("tools/call", a.message());
            a
        }
    };
    let a = call("current_time", json!({"when": "@86400"})).await;
    assert_eq!(a.result()["structuredContent"], json!({"iso": "1970-01-02T00:00:00Z", "unix": 86400}));
    assert!(call("system_info", json!({})).await.text(0).starts_with("Linux "));
    assert!(call("disk_usage", json!({})).await.text(0).starts_with("Filesystem"));
    // Directories and files under /usr/share only (paths.* allowed_roots).
    assert!(call("list_directory", json!({})).await.text(0).contains(" common-licenses\n"));
    assert!(call("list_directory", json!({"path": "common-licenses"})).await.text(0).contains(" GPL-3\n"));
    for path in ["/", "/etc", "/usr/share/../../etc", "common-licenses/../.."] {
        let a = call("list_directory", json!({ "path": path })).await;
        assert_eq!(a.result()["isError"], true, "{path}: {:?}", a.messages);
        assert!(a.text(0).contains("give a path under /usr/share"), "{}", a.text(0));
    }
    let license = "/usr/share/common-licenses/GPL-3";
    let expected = std::process::Command::new("sha256sum").arg(license).output().unwrap().stdout;
    let hash = String::from_utf8(expected).unwrap()[..64].to_owned();
    let a = call("checksum_files", json!({"paths": [license, "common-licenses/GPL-3"]})).await;
    assert_eq!(a.text(0), format!("{hash}  /proc/self/fd/3\n{hash}  /proc/self/fd/4\n"));
    for outside in ["/etc/hostname", "/dev/null", "../../etc/hostname"] {
        let a = call("checksum_files", json!({ "paths": [outside] })).await;
        assert_eq!(a.result()["isError"], true, "{outside}: {:?}", a.messages);
    }
    assert_eq!(
        call("count_text", json!({"text": "one two\nthree\n"})).await.text(0).split_whitespace().collect::<Vec<_>>(),
        ["2", "3", "14"]
    );
    let a = call("sha256_text", json!({"text": "abc"})).await;
    assert!(a.text(0).starts_with("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"));
    assert_eq!(call("base64_encode", json!({"text": "hello"})).await.text(0), "aGVsbG8=");
    assert_eq!(call("base64_decode", json!({"data": "aGVsbG8="})).await.text(0), "hello");
    assert_eq!(call("base64_decode", json!({"data": "!!"})).await.result()["isError"], true);
    let a = call("search_text", json!({"pattern": "-v", "text": "a\n-v b\nc -V", "ignore_case": true})).await;
    assert_eq!(a.text(0), "2:-v b\n3:c -V\n");
    let a = call("search_text", json!({"pattern": "zzz", "text": "a"})).await;
    assert_eq!((a.result()["isError"].clone(), a.text(0)), (Value::Null, String::new()));
    let a = call("sort_lines", json!({"text": "10\n2\n1\n2", "numeric": true, "reverse": true, "unique": true})).await;
    assert_eq!(a.text(0), "10\n2\n1\n");

    // The embedded demo config's clock (a built-in set since the image has no `date`).
    let default = std::fs::read_to_string(paths::repo().join("service/config/default.toml")).unwrap();
    let s = Server::start(&default);
    let a = s.mcp().tool("utc_now", json!({})).await;
    assert_response("tools/call", a.message());
    let now = &a.result()["structuredContent"];
    assert!(
        now["iso"].as_str().is_some_and(|t| t.ends_with('Z')) && now["unix"].as_i64().unwrap() > 1_700_000_000,
        "{now}"
    );
}
