//! CLI path arguments confined to their roots, with real programs (`cat`, `ls`), real
//! directories and symbolic links in a temp dir, through the real binary (its supervisor
//! passes the opened descriptors on): `..`, absolute paths outside, links leading out are
//! refused as tool errors before the program starts; links that stay inside work; a link
//! swapped in while calls run never lets a program read outside. Every scenario runs twice:
//! with the kernel's `openat2` and with the fallback walk (forced by the test switch).

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use mcp_e2e::procs::script;
use mcp_e2e::schema::assert_response;
use mcp_e2e::{Answer, Server};
use serde_json::{Value, json};

/// The test switch (`mcp_adapter_cli::tool::FORCE_WALK_ENV`, in test builds only).
const FORCE_WALK: (&str, &str) = ("MCP_TEST_CLI_PATH_WALK", "1");

/// `root/` with files, a directory, links that stay inside and links that leave, beside an
/// `outside/secret`; `read` (cat) and `list` (ls) confined to `root`. `ran.log` counts the
/// program's starts.
fn config(dir: &Path) -> String {
    let root = dir.join("root");
    std::fs::create_dir_all(root.join("sub/deeper")).unwrap();
    std::fs::create_dir(dir.join("outside")).unwrap();
    std::fs::write(root.join("sub/file"), "INSIDE").unwrap();
    std::fs::write(root.join("swing"), "INSIDE").unwrap();
    std::fs::write(dir.join("outside/secret"), "SECRET").unwrap();
    let link = |target: &str, name: &str| std::os::unix::fs::symlink(target, root.join(name)).unwrap();
    link("sub/file", "to-file");
    link("../../sub", "sub/deeper/up");
    link("../outside/secret", "out");
    link(dir.join("outside/secret").to_str().unwrap(), "abs");
    let ran = dir.join("ran.log");
    let cat = script(dir, "read", &format!("echo >> '{}'; exec cat -- \"$@\"", ran.display()));
    let root = root.display();
    format!(
        r#"
[[adapters]]
name = "files"
kind = "cli"

[[adapters.tools]]
name = "read"
description = "Prints the files"
executable = "{cat}"
args = [{{ each = "files", then = ["{{files}}"] }}]
input_schema = {{ type = "object", required = ["files"], properties = {{ files = {{ type = "array", items = {{ type = "string" }} }} }} }}
paths.files = {{ allowed_roots = ["{root}"], kind = "file" }}

[[adapters.tools]]
name = "list"
description = "Lists a directory"
executable = "ls"
args = ["-1", "--dereference-command-line", "--", "{{dir}}"]
input_schema = {{ type = "object", required = ["dir"], properties = {{ dir = {{ type = "string" }} }} }}
paths.dir = {{ allowed_roots = ["{root}"], kind = "directory" }}
"#,
        cat = cat.display()
    )
}

fn starts(dir: &Path) -> usize {
    std::fs::read_to_string(dir.join("ran.log")).map(|s| s.lines().count()).unwrap_or(0)
}

fn ok_text(a: &Answer) -> String {
    assert_response("tools/call", a.message());
    assert_eq!(a.result()["isError"], Value::Null, "{:?}", a.messages);
    a.text(0)
}

fn refusal(a: &Answer) -> String {
    assert_response("tools/call", a.message());
    assert_eq!(a.result()["isError"], true, "{:?}", a.messages);
    a.text(0)
}

async fn scenario(env: &[(&str, &str)]) {
    let dir = tempfile::tempdir().unwrap();
    let s = Server::start_with(&config(dir.path()), env);
    if !env.is_empty() {
        s.log_line("resolved by the fallback walk").await;
    }
    let mcp = s.mcp();
    let root = dir.path().join("root");
    let read = |files: Value| {
        let mcp = mcp.clone();
        async move { mcp.tool("read", json!({ "files": files })).await }
    };

    // Inside: relative, absolute, and through links that stay inside.
    let abs = root.join("sub/file");
    let a = read(json!(["sub/file", abs, "to-file", "sub/deeper/up/file"])).await;
    assert_eq!(ok_text(&a), "INSIDE".repeat(4));
    let listed = ok_text(&mcp.tool("list", json!({"dir": "sub/deeper/up"})).await);
    assert_eq!(listed, "deeper\nfile\n");

    // Refused before the program starts, naming the argument and the root, saying nothing
    // of what lies outside.
    let before = starts(dir.path());
    let outside = dir.path().join("outside/secret");
    for (bad, why) in [
        (json!("../outside/secret"), "contains '..'"),
        (json!("sub/../../outside/secret"), "contains '..'"),
        (json!(outside), "is outside the directories this tool may use"),
        (json!("/etc/passwd"), "is outside the directories this tool may use"),
        (json!("out"), "leads outside"),
        (json!("abs"), "leads outside"),
        (json!("missing"), "does not exist under"),
        (json!("sub"), "is not a regular file"),
    ] {
        let text = refusal(&read(json!(["sub/file", bad])).await);
        assert!(text.starts_with("Argument 'files.1': ") && text.contains(why), "{bad}: {text}");
        assert!(text.contains(&format!("{}", root.display())) || why == "is not a regular file", "{text}");
        if why == "leads outside" {
            assert!(!text.contains("outside/secret"), "a refusal told where a link points: {text}");
        }
    }
    let text = refusal(&mcp.tool("list", json!({"dir": "/"})).await);
    assert!(text.contains(&format!("give a path under {}", root.display())), "{text}");
    assert_eq!(starts(dir.path()), before, "a refused call started the program");

    // A symbolic link swapped in and out while calls run: every read is the file inside or a
    // refusal, never the secret (the program gets the object that was checked).
    let swing = root.join("swing");
    let stop = Arc::new(AtomicBool::new(false));
    let swapper = {
        let (stop, dir) = (stop.clone(), dir.path().to_owned());
        std::thread::spawn(move || {
            let (file, link) = (dir.join("root/.swing-file"), dir.join("root/.swing-link"));
            let mut swaps = 0u64;
            while !stop.load(Ordering::Relaxed) {
                std::fs::write(&file, "INSIDE").unwrap();
                std::fs::rename(&file, &swing).unwrap();
                let _ = std::fs::remove_file(&link);
                std::os::unix::fs::symlink(dir.join("outside/secret"), &link).unwrap();
                std::fs::rename(&link, &swing).unwrap();
                swaps += 1;
            }
            swaps
        })
    };
    let (mut read_inside, mut refused) = (0, 0);
    for _ in 0..150 {
        let a = read(json!(["swing"])).await;
        assert_response("tools/call", a.message());
        let text = a.text(0);
        assert!(!text.contains("SECRET"), "a swapped-in link let the program read outside: {text}");
        if a.result()["isError"] == true {
            assert!(text.contains("leads outside"), "{text}");
            refused += 1;
        } else {
            assert_eq!(text, "INSIDE");
            read_inside += 1;
        }
    }
    stop.store(true, Ordering::Relaxed);
    let swaps = swapper.join().unwrap();
    // How the calls and the swaps interleave depends on the machine's load (on a busy one the
    // swapper may be starved for a while): what must hold is that it ran, and the assertions
    // above on every call.
    assert!(swaps > 0, "the swapper never ran (read {read_inside}, refused {refused})");
}

/// `openat2` where the kernel has it (Linux ≥ 5.6), else the walk.
#[tokio::test]
async fn paths_stay_inside_their_roots() {
    scenario(&[]).await;
}

#[tokio::test]
async fn paths_stay_inside_their_roots_with_the_fallback_walk() {
    scenario(&[FORCE_WALK]).await;
}
