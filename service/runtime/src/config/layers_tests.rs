//! A configuration set as its users write one: a base file, a `conf.d/` of TOML, YAML and
//! JSON, environment overrides; merged key by key, lists concatenated, every problem of every
//! file in one report at its own file's line.

use std::path::{Path, PathBuf};

use super::{Config, ConfigError};

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, text).unwrap();
    path
}

fn env(vars: &[(&str, &str)]) -> Vec<(String, String)> {
    vars.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect()
}

fn report(e: ConfigError) -> String {
    assert!(matches!(e, ConfigError::File(_)), "{e:?}");
    e.to_string()
}

const BASE: &str =
    "[server]\nname = \"base\"\npage_size = 7\n\n[[adapters]]\nname = \"demo\"\nkind = \"fixtures\"\nset = \"demo\"\n";
const TEAM_YAML: &str = "server:\n  name: team\nadapters:\n  - name: clock\n    kind: fixtures\n    set: clock\n";
const OPS_JSON: &str =
    "{\n  \"server\": { \"call_timeout_ms\": 1234 },\n  \"tool_policies\": { \"echo\": { \"confirm\": true } }\n}\n";

#[test]
fn files_and_folders_merge_key_by_key_and_lists_concatenate() {
    let dir = tempfile::tempdir().unwrap();
    let base = write(dir.path(), "base.toml", BASE);
    write(dir.path(), "conf.d/10-team.yaml", TEAM_YAML);
    write(dir.path(), "conf.d/20-ops.json", OPS_JSON);
    write(dir.path(), "conf.d/.hidden.toml", "this is not read");
    let paths = [base, dir.path().join("conf.d")];
    let c = Config::load_set(&paths, env(&[("MCP_RUNTIME__SERVER__PAGE_SIZE", "9")])).unwrap();
    assert_eq!(c.server.info.name, "team", "the later file wins");
    assert_eq!(c.server.call_timeout.as_millis(), 1234, "keys of the same table come from every file");
    assert_eq!(c.server.page_size, 9, "the environment applies last");
    let names: Vec<&str> = c.adapters.iter().map(|a| a.name.as_str()).collect();
    assert_eq!(names, ["demo", "clock"], "lists of tables concatenate in file order");
    assert_eq!(c.tool_policies["echo"].confirm, Some(true));
    assert!(c.source.name.contains("base.toml") && c.source.name.contains("conf.d"), "{}", c.source.name);
}

#[test]
fn every_problem_of_every_file_is_reported_at_its_own_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let base = write(dir.path(), "base.toml", "[server]\npage_size = \"7\"\n");
    write(dir.path(), "conf.d/10-team.yaml", "server:\n  nmae: team\n");
    write(dir.path(), "conf.d/20-ops.json", "{\n  \"tasks\": {\n    \"ttl_ms\": 0\n  }\n}\n");
    let e = Config::load_set(&[base.clone(), dir.path().join("conf.d")], []).unwrap_err();
    let out = report(e);
    let yaml = dir.path().join("conf.d/10-team.yaml").display().to_string();
    let json = dir.path().join("conf.d/20-ops.json").display().to_string();
    assert!(out.contains(&format!(" --> {}:2:13\n", base.display())), "{out}");
    assert!(out.contains("error: server.nmae: unknown key `nmae`"), "{out}");
    assert!(out.contains(&format!(" --> {yaml}:2:3\n")), "{out}");
    assert!(out.contains("= help: did you mean `name`?"), "{out}");
    assert!(out.contains("error: tasks: ttl_ms and poll_interval_ms must be at least 1"), "{out}");
    assert!(out.contains(&format!(" --> {json}:")), "{out}");
    assert!(out.ends_with("has 3 problems"), "{out}");
}

#[test]
fn an_entry_named_in_two_files_names_both() {
    let dir = tempfile::tempdir().unwrap();
    let base = write(dir.path(), "base.toml", BASE);
    let team = write(dir.path(), "team.yaml", "adapters:\n  - name: demo\n    kind: fixtures\n    set: clock\n");
    let out = report(Config::load_set(&[base.clone(), team.clone()], []).unwrap_err());
    assert!(
        out.contains(&format!(
            "error: adapters.demo.name: 'demo' is also declared in {}:6; names must be unique across the files of a configuration",
            base.display()
        )),
        "{out}"
    );
    assert!(out.contains(&format!(" --> {}:2:11\n", team.display())), "{out}");
}

#[test]
fn syntax_errors_of_yaml_and_json_are_located() {
    let dir = tempfile::tempdir().unwrap();
    let yaml = write(dir.path(), "a.yaml", "server:\n  name: [unclosed\n");
    let json = write(dir.path(), "b.json", "{\n  \"server\": { \"name\": \"x\", }\n}\n");
    let out = report(Config::load_set(&[yaml.clone(), json.clone()], []).unwrap_err());
    assert!(out.contains(&format!("{}:", yaml.display())), "{out}");
    assert!(out.contains(&format!(" --> {}:2:", json.display())), "{out}");
    assert!(out.contains("2:28\n") && out.contains("key must be a string"), "{out}");
}

#[test]
fn a_relative_path_starts_at_the_folder_of_the_file_it_is_written_in() {
    let dir = tempfile::tempdir().unwrap();
    let base = write(dir.path(), "base.toml", "[server]\nname = \"x\"\n");
    let tls = write(dir.path(), "secrets/tls.yaml", "tls:\n  cert_file: cert.pem\n  key_file: key.pem\n");
    let c = Config::load_set(&[base, tls], []).unwrap();
    let t = c.tls.expect("tls");
    assert_eq!(t.cert_file, dir.path().join("secrets/cert.pem"));
    assert_eq!(t.key_file, dir.path().join("secrets/key.pem"));
}

#[test]
fn an_empty_folder_is_a_problem_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("conf.d")).unwrap();
    let out = report(Config::load_set(&[dir.path().join("conf.d")], []).unwrap_err());
    assert!(out.contains("conf.d: the folder holds no *.toml, *.yaml, *.yml or *.json file"), "{out}");
}
