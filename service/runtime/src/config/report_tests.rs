//! The shape of every class of configuration error: named path, `file:line:col`, the line
//! and a caret, each said once, all of them at once.

use super::{Config, ConfigError, ENV_PREFIX, Source};

fn problems_of(text: &str, env: &[(&str, &str)]) -> String {
    let env = env.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned()));
    let source = Source::new("first.toml".to_owned(), text.to_owned(), env, ENV_PREFIX);
    let e = match Config::from_source(source, Default::default()).and_then(Config::checked) {
        Ok(_) => panic!("expected an error for:\n{text}"),
        Err(e) => e,
    };
    assert!(matches!(e, ConfigError::File(_)), "{e:?}");
    e.to_string()
}

const CLOCK: &str = r#"[[adapters]]
name = "clock"
kind = "cli"

[[adapters.tools]]
name = "utc_now"
description = "The time."
executable = "date"
timeout_ms = "5000"
"#;

/// Asserts each problem is said once, and returns the report.
fn once(out: String, messages: &[&str]) -> String {
    for m in messages {
        assert_eq!(out.matches(m).count(), 1, "`{m}` once in:\n{out}");
    }
    out
}

#[test]
fn a_type_error_names_the_tool_and_the_field_by_name_with_line_and_caret() {
    let out = problems_of(CLOCK, &[]);
    assert_eq!(
        out,
        r#"error: adapters.clock.tools.utc_now.timeout_ms: invalid type: string "5000", expected a whole number (0 or more)
 --> first.toml:9:14
  |
9 | timeout_ms = "5000"
  |              ^^^^^^
  = help: write it without quotes: `timeout_ms = 5000`

error: first.toml has 1 problem"#
    );
}

#[test]
fn a_misspelt_section_is_reported_where_it_is_written_with_the_near_key() {
    let out =
        problems_of("[server]\nname = \"x\"\n\n[[adapter]]\nname = \"x\"\nkind = \"fixtures\"\nset = \"demo\"\n", &[]);
    assert_eq!(
        out,
        "error: adapter: unknown key `adapter`\n --> first.toml:4:3\n  |\n4 | [[adapter]]\n  |   ^^^^^^^\n  = help: did you mean `adapters`?\n\nerror: first.toml has 1 problem"
    );
}

#[test]
fn a_near_miss_inside_an_adapter_gets_the_full_path_and_did_you_mean() {
    let out = problems_of("[[adapters]]\nname = \"api\"\nkind = \"rest\"\nbase_url = [\"http://127.0.0.1:9\"]\n", &[]);
    assert!(out.starts_with("error: adapters.api.base_url: unknown key `base_url`\n --> first.toml:4:1\n"), "{out}");
    assert!(
        out.contains("4 | base_url = [\"http://127.0.0.1:9\"]\n  | ^^^^^^^^\n  = help: did you mean `base_urls`?"),
        "{out}"
    );
    once(out, &["base_url`"]);
}

#[test]
fn a_near_miss_whose_value_the_right_key_refuses_is_one_problem_that_says_both() {
    let out = problems_of("[[adapters]]\nname = \"api\"\nkind = \"rest\"\nbase_url = \"http://127.0.0.1:9\"\n", &[]);
    let out = once(out, &["base_url`", "base_urls", "has 1 problem"]);
    assert!(
        out.contains(
            "  = help: did you mean `base_urls`? It would refuse this value: invalid type: string \"http://127.0.0.1:9\", expected an array"
        ),
        "{out}"
    );
}

#[test]
fn an_unknown_key_without_a_near_miss_is_shown_at_the_key_with_the_keys_there_are() {
    let text = "[[adapters]]\nname = \"d\"\nkind = \"fixtures\"\nset = \"demo\"\nflavour = \"vanilla\"\n";
    let out = problems_of(text, &[]);
    assert!(
        out.starts_with(
            "error: adapters.d.flavour: unknown key `flavour`\n --> first.toml:5:1\n  |\n5 | flavour = \"vanilla\"\n  | ^^^^^^^\n  = help: the keys here are"
        ),
        "{out}"
    );
}

#[test]
fn a_typo_in_a_required_key_is_the_typo_not_a_missing_key() {
    let text = "[[adapters]]\nname = \"t\"\nkind = \"cli\"\n\n[[adapters.tools]]\nname = \"a\"\ndescrption = \"x\"\nexecutable = \"date\"\n";
    let out = problems_of(text, &[]);
    assert!(
        out.starts_with("error: adapters.t.tools.a.descrption: unknown key `descrption`\n --> first.toml:7:1\n"),
        "{out}"
    );
    assert!(out.contains("  = help: did you mean `description`?"), "{out}");
    assert!(!out.contains("missing"), "{out}");
}

#[test]
fn a_problem_inside_a_tools_own_table_is_shown_there_with_its_whole_path() {
    let text = "[[adapters]]\nname = \"files\"\nkind = \"cli\"\n\n[[adapters.tools]]\nname = \"cat\"\ndescription = \"x\"\nexecutable = \"cat\"\n\n[adapters.tools.paths.path]\nallowed_roots = [\"/tmp\"]\nmode = \"read\"\n";
    let out = problems_of(text, &[]);
    assert_eq!(
        out,
        "error: adapters.files.tools.cat.paths.path.mode: unknown key `mode`\n  --> first.toml:12:1\n   |\n12 | mode = \"read\"\n   | ^^^^\n   = help: the keys here are `allowed_roots`, `kind`\n\nerror: first.toml has 1 problem"
    );
}

#[test]
fn another_configs_word_for_a_key_is_that_key_with_the_value_taken_apart() {
    // `command`, as the `mcp` adapter and MCP clients write it, for a CLI tool's `executable`.
    let tool =
        "[[adapters]]\nname = \"files\"\nkind = \"cli\"\n\n[[adapters.tools]]\nname = \"cat\"\ndescription = \"x\"\n";
    let out = problems_of(&format!("{tool}command = [\"/bin/cat\", \"{{path}}\"]\n"), &[]);
    assert_eq!(
        out,
        "error: adapters.files.tools.cat.command: unknown key `command`\n --> first.toml:8:1\n  |\n8 | command = [\"/bin/cat\", \"{path}\"]\n  | ^^^^^^^\n  = help: did you mean `executable`? A CLI tool takes its program and its arguments apart: `executable = \"/bin/cat\"` and `args = [\"{path}\"]` (`command` is the `mcp` adapter's word)\n\nerror: first.toml has 1 problem"
    );
    let out = problems_of(&format!("{tool}command = \"/bin/cat\"\nargs = [\"{{path}}\"]\n"), &[]);
    assert!(
        out.starts_with("error: adapters.files.tools.cat.command: unknown key `command`\n --> first.toml:8:1\n"),
        "{out}"
    );
    assert!(out.contains("  = help: did you mean `executable`? (`command` is the `mcp` adapter's word)\n"), "{out}");
    assert!(!out.contains("missing"), "{out}");
}

#[test]
fn a_missing_key_points_at_its_table() {
    let text =
        "[[adapters]]\nname = \"t\"\nkind = \"cli\"\n\n[[adapters.tools]]\nname = \"a\"\nexecutable = \"date\"\n";
    let out = problems_of(text, &[]);
    assert_eq!(
        out,
        "error: adapters.t.tools.a: missing key `description`\n --> first.toml:5:1\n  |\n5 | [[adapters.tools]]\n  | ^^^^^^^^^^^^^^^^^^\n\nerror: first.toml has 1 problem"
    );
}

#[test]
fn a_missing_key_does_not_hide_the_rest_of_the_file() {
    // The tool missing `description` is left out, and the search goes on: the next tool's
    // problem, the next adapter's two and the server's are found in the same run.
    let text = "[server]\npage_size = \"7\"\n\n[[adapters]]\nname = \"t\"\nkind = \"cli\"\n\n[[adapters.tools]]\nname = \"a\"\nexecutable = \"date\"\n\n[[adapters.tools]]\nname = \"b\"\ndescription = \"B.\"\nexecutable = \"date\"\ntimeout_ms = \"5000\"\n\n[[adapters]]\nname = \"u\"\nkind = \"cli\"\nunknown = 1\n";
    let out = once(
        problems_of(text, &[]),
        &[
            "server.page_size: invalid type: string \"7\"",
            "adapters.t.tools.a: missing key `description`",
            "adapters.t.tools.b.timeout_ms: invalid type: string \"5000\"",
            "adapters.u: missing key `tools`",
            "adapters.u.unknown: unknown key `unknown`",
        ],
    );
    assert!(out.ends_with("error: first.toml has 5 problems"), "{out}");
}

#[test]
fn an_unknown_kind_points_at_the_value() {
    let out = problems_of("[[adapters]]\nname = \"t\"\nkind = \"clii\"\n", &[]);
    assert!(out.starts_with("error: adapters.t.kind: unknown value `clii`\n --> first.toml:3:8\n"), "{out}");
    assert!(out.contains("3 | kind = \"clii\"\n  |        ^^^^^^\n  = help: did you mean `cli`?"), "{out}");
}

#[test]
fn syntax_errors_are_located() {
    let out = problems_of("[server]\nlisten = \n", &[]);
    assert!(out.starts_with("error: string values must be quoted"), "{out}");
    assert!(out.contains(" --> first.toml:2:10\n  |\n2 | listen = \n  |          ^\n"), "{out}");
}

#[test]
fn a_value_from_the_environment_names_the_variable() {
    let out = problems_of("[server]\npage_size = 5\n", &[("MCP_RUNTIME__SERVER__LISTEN", "nope")]);
    assert!(out.starts_with("error: server.listen: 'nope' is not an IP:port address"), "{out}");
    assert!(out.contains("\n  --> environment variable MCP_RUNTIME__SERVER__LISTEN\n"), "{out}");
}

#[test]
fn validation_problems_are_located_too() {
    let out = problems_of("[server]\npage_size = 0\n", &[]);
    assert_eq!(
        out,
        "error: server.page_size: must be at least 1\n --> first.toml:2:13\n  |\n2 | page_size = 0\n  |             ^\n\nerror: first.toml has 1 problem"
    );
}

#[test]
fn every_problem_of_the_file_at_once_each_said_once() {
    let out = problems_of("[server]\nlistn = \"x\"\npage_size = \"7\"\n\n[tasks]\nttl = 5\n", &[]);
    let out = once(
        out,
        &["unknown key `listn`", "invalid type: string \"7\"", "unknown key `ttl`", "\n2 | ", "\n3 | ", "\n6 | "],
    );
    let order: Vec<_> =
        ["server.listn:", "server.page_size:", "tasks.ttl:"].iter().map(|k| out.find(k).unwrap()).collect();
    assert!(order.windows(2).all(|w| w[0] < w[1]), "in file order:\n{out}");
    assert!(out.ends_with("error: first.toml has 3 problems"), "{out}");
}

#[test]
fn problems_found_when_building_adapters_are_located_by_name() {
    let config = Config::from_toml(CLOCK.replace("\"5000\"", "5000").as_str()).unwrap();
    let e = config.locate(ConfigError::invalid("adapters.clock.tools.utc_now.executable", "'date' is not on PATH"));
    assert_eq!(
        e.to_string(),
        "error: adapters.clock.tools.utc_now.executable: 'date' is not on PATH\n --> <config>:8:14\n  |\n8 | executable = \"date\"\n  |              ^^^^^^\n\nerror: <config> has 1 problem"
    );
}
