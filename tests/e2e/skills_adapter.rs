//! The skills adapter (`kind = "skills"`, the `io.modelcontextprotocol/skills` extension,
//! SEP-2640) as a client sees it: a folder of skills written by the test, served by the real
//! runtime; the entries' digests and sizes are those of the bytes on disk and of the bytes
//! `resources/read` returns; directories list their children; nothing outside the folder is
//! ever served (`..`, links out of it, a skill named like a path); a changed file is served
//! after the next poll; a broken `SKILL.md` is named in the log and the rest still served; an
//! `mcp` upstream's skills pass through another runtime.

use std::os::unix::fs::symlink;
use std::path::Path;
use std::time::Duration;

use mcp_e2e::{Mcp, Server};
use serde_json::{Value, json};

fn write(root: &Path, rel: &str, text: &str) {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn sha256(bytes: &[u8]) -> String {
    let d = ring::digest::digest(&ring::digest::SHA256, bytes);
    format!("sha256:{}", d.as_ref().iter().map(|b| format!("{b:02x}")).collect::<String>())
}

const PDF: &str = "---\nname: pdf-processing\ndescription: Extract, fill, and assemble PDF documents\nlicense: Apache-2.0\nmetadata:\n  version: \"2.1.0\"\n---\n\n# PDF processing\n\nRead `references/FORMS.md`.\n";

/// A folder with two good skills (one under an organizational prefix) beside `outside/`.
fn tree() -> tempfile::TempDir {
    let t = tempfile::tempdir().unwrap();
    let root = t.path().join("skills");
    write(&root, "pdf-processing/SKILL.md", PDF);
    write(&root, "pdf-processing/references/FORMS.md", "# Forms\n");
    write(&root, "pdf-processing/templates/invoice.md", "# Invoice\n");
    write(
        &root,
        "acme/billing/refunds/SKILL.md",
        "---\nname: refunds\ndescription: Process customer refund requests\n---\nBody\n",
    );
    write(t.path(), "outside/secret.txt", "the secret outside the root\n");
    t
}

fn start(t: &tempfile::TempDir, poll_ms: u64) -> Server {
    Server::start(&format!(
        "[[adapters]]\nname = \"skills\"\nkind = \"skills\"\nroot = \"{}\"\npoll_interval_ms = {poll_ms}\n",
        t.path().join("skills").display()
    ))
}

async fn list(mcp: &Mcp) -> Vec<Value> {
    let a = mcp.call("skills/list", json!({})).await;
    a.result()["skills"].as_array().unwrap_or_else(|| panic!("skills/list: {}", a.message())).clone()
}

fn uris(skills: &[Value]) -> Vec<&str> {
    skills.iter().map(|s| s["uri"].as_str().unwrap()).collect()
}

#[tokio::test]
async fn listing_get_and_directories_carry_the_digests_of_the_bytes_served() {
    let t = tree();
    let server = start(&t, 0);
    let mcp = server.mcp();
    let discover = mcp.call("server/discover", json!({})).await;
    let caps = &discover.result()["capabilities"];
    assert_eq!(caps["extensions"]["io.modelcontextprotocol/skills"], json!({"directoryRead": true}), "{caps}");
    assert!(caps["resources"].is_object(), "the extension needs the resources capability: {caps}");

    let page = mcp.call("skills/list", json!({})).await;
    let result = page.result();
    assert_eq!(result["resultType"], "complete");
    assert!(result["ttlMs"].is_u64() && result["cacheScope"].is_string(), "{result}");
    let skills = result["skills"].as_array().unwrap();
    assert_eq!(uris(skills), ["skill://acme/billing/refunds/SKILL.md", "skill://pdf-processing/SKILL.md"]);
    let pdf = &skills[1];
    assert_eq!(
        pdf["frontmatter"],
        json!({"name": "pdf-processing", "description": "Extract, fill, and assemble PDF documents",
               "license": "Apache-2.0", "metadata": {"version": "2.1.0"}}),
        "the frontmatter verbatim"
    );
    let root = t.path().join("skills/pdf-processing");
    let expected: Vec<Value> = ["SKILL.md", "references/FORMS.md", "templates/invoice.md"]
        .iter()
        .map(|rel| {
            let bytes = std::fs::read(root.join(rel)).unwrap();
            json!({"uri": format!("skill://pdf-processing/{rel}"), "digest": sha256(&bytes), "size": bytes.len()})
        })
        .collect();
    assert_eq!(pdf["resources"], Value::Array(expected.clone()), "SKILL.md first, every file once");

    // What resources/read returns is what the digests describe.
    for entry in &expected {
        let read = mcp.call("resources/read", json!({"uri": entry["uri"]})).await;
        let text = read.result()["contents"][0]["text"].as_str().unwrap_or_else(|| panic!("{}", read.message()));
        assert_eq!(sha256(text.as_bytes()), entry["digest"], "{}", entry["uri"]);
    }
    let manifest = mcp.call("resources/read", json!({"uri": "skill://pdf-processing/SKILL.md"})).await;
    assert_eq!(manifest.result()["contents"][0]["mimeType"], "text/markdown");

    // skills/get: the same entry, with cache hints and no cursor; an unknown skill is -32602.
    let get = mcp.call("skills/get", json!({"uri": "skill://pdf-processing/SKILL.md"})).await;
    assert_eq!(get.result()["skill"], *pdf);
    assert!(get.result()["ttlMs"].is_u64() && get.result().get("nextCursor").is_none());
    let unknown = mcp.call("skills/get", json!({"uri": "skill://nope/SKILL.md"})).await;
    assert_eq!(unknown.error_code(), Some(-32602), "{}", unknown.message());
    assert!(unknown.error_message().contains("skill://nope/SKILL.md"));

    // SKILL.md resources are listed with the frontmatter's name and description.
    let resources = mcp.call("resources/list", json!({})).await;
    let listed = resources.result()["resources"].as_array().unwrap();
    let md = listed.iter().find(|r| r["uri"] == "skill://pdf-processing/SKILL.md").unwrap();
    assert_eq!((&md["name"], &md["description"]), (&json!("pdf-processing"), &pdf["frontmatter"]["description"]));

    // Directories: the root and every subdirectory; files and a path are not directories.
    let dir = mcp.call("resources/directory/read", json!({"uri": "skill://pdf-processing"})).await;
    let children: Vec<(String, String)> = dir.result()["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["name"].as_str().unwrap().to_owned(), c["mimeType"].as_str().unwrap().to_owned()))
        .collect();
    let want = [("SKILL.md", "text/markdown"), ("references", "inode/directory"), ("templates", "inode/directory")];
    assert_eq!(children, want.map(|(a, b)| (a.to_owned(), b.to_owned())));
    let sub = mcp.call("resources/directory/read", json!({"uri": "skill://pdf-processing/templates"})).await;
    assert_eq!(sub.result()["resources"][0]["uri"], "skill://pdf-processing/templates/invoice.md");
    for not_a_dir in ["skill://pdf-processing/SKILL.md", "skill://pdf-processing/", "skill://nope"] {
        let a = mcp.call("resources/directory/read", json!({"uri": not_a_dir})).await;
        assert_eq!(a.error_code(), Some(-32602), "{not_a_dir}: {}", a.message());
    }
}

#[tokio::test]
async fn nothing_outside_the_root_is_served() {
    let t = tree();
    let root = t.path().join("skills");
    // A link out of the root inside a skill, a linked directory out of it, and a link that stays.
    symlink(t.path().join("outside/secret.txt"), root.join("pdf-processing/leak.txt")).unwrap();
    symlink(t.path().join("outside"), root.join("pdf-processing/out")).unwrap();
    symlink("references/FORMS.md", root.join("pdf-processing/forms.md")).unwrap();
    // A skill named like a path, and one whose name is not its directory's.
    write(&root, "sneaky/SKILL.md", "---\nname: ../outside\ndescription: Escapes\n---\n");
    write(&root, "other/SKILL.md", "---\nname: pdf-processing\ndescription: Shadows another\n---\n");
    // A whole skill behind a link out of the root.
    write(t.path(), "outside/evil/SKILL.md", "---\nname: evil\ndescription: Outside\n---\n");
    symlink(t.path().join("outside/evil"), root.join("evil")).unwrap();
    let server = start(&t, 0);
    let mcp = server.mcp();

    let skills = list(&mcp).await;
    assert_eq!(uris(&skills), ["skill://acme/billing/refunds/SKILL.md", "skill://pdf-processing/SKILL.md"]);
    let files: Vec<&str> =
        skills[1]["resources"].as_array().unwrap().iter().map(|r| r["uri"].as_str().unwrap()).collect();
    assert!(files.contains(&"skill://pdf-processing/forms.md"), "a link inside the root is served: {files:?}");
    assert!(!files.iter().any(|f| f.contains("leak") || f.contains("/out/")), "{files:?}");

    for uri in [
        "skill://pdf-processing/leak.txt",
        "skill://pdf-processing/out/secret.txt",
        "skill://pdf-processing/../../outside/secret.txt",
        "skill://pdf-processing/%2E%2E/%2E%2E/outside/secret.txt",
        "skill://pdf-processing/references/../../../outside/secret.txt",
        "skill://../outside/secret.txt",
        "skill://evil/SKILL.md",
        "skill://sneaky/SKILL.md",
        "skill://pdf-processing//etc/passwd",
    ] {
        let a = mcp.call("resources/read", json!({"uri": uri})).await;
        assert_eq!(a.error_code(), Some(-32602), "{uri}: {}", a.message());
        assert!(!a.message().to_string().contains("the secret"), "{uri}");
    }
    server.log_line("pdf-processing/leak.txt: a symbolic link out of the root; refused").await;
    server.log_line("pdf-processing/out: a symbolic link out of the root; refused").await;
    server.log_line("evil: a symbolic link out of the root; refused").await;
    server.log_line("sneaky/SKILL.md: `name: ../outside` is not a valid skill name").await;
    server.log_line("other/SKILL.md: `name: pdf-processing` must equal the skill's directory name `other`").await;
}

#[tokio::test]
async fn a_changed_file_is_served_after_the_next_poll() {
    let t = tree();
    let server = start(&t, 100);
    let mcp = server.mcp();
    let digest = |skill: &Value, uri: &str| {
        skill["resources"].as_array().unwrap().iter().find(|r| r["uri"] == uri).map(|r| r["digest"].clone())
    };
    let forms = "skill://pdf-processing/references/FORMS.md";
    let get = mcp.call("skills/get", json!({"uri": "skill://pdf-processing/SKILL.md"})).await;
    let before = digest(&get.result()["skill"], forms).unwrap();

    let root = t.path().join("skills");
    let changed = "# Forms\n\nRequired fields are starred.\n";
    write(&root, "pdf-processing/references/FORMS.md", changed);
    write(&root, "pdf-processing/templates/credit-note.md", "# Credit note\n");
    write(&root, "new-skill/SKILL.md", "---\nname: new-skill\ndescription: Added while serving\n---\n");

    let entry = mcp_e2e::wait::eventually(
        Duration::from_secs(10),
        || "skills/get never showed the new FORMS.md digest".to_owned(),
        || async {
            let a = mcp.call("skills/get", json!({"uri": "skill://pdf-processing/SKILL.md"})).await;
            let skill = a.result()["skill"].clone();
            (digest(&skill, forms).as_ref() != Some(&before)).then_some(skill)
        },
    )
    .await;
    assert_eq!(digest(&entry, forms), Some(json!(sha256(changed.as_bytes()))));
    assert!(digest(&entry, "skill://pdf-processing/templates/credit-note.md").is_some(), "an added file is listed");
    let read = mcp.call("resources/read", json!({"uri": forms})).await;
    assert_eq!(read.result()["contents"][0]["text"], changed);
    assert!(uris(&list(&mcp).await).contains(&"skill://new-skill/SKILL.md"), "an added skill is listed");

    // A removed file is no longer served.
    std::fs::remove_file(root.join("pdf-processing/templates/credit-note.md")).unwrap();
    mcp_e2e::wait::eventually(
        Duration::from_secs(10),
        || "the removed file is still served".to_owned(),
        || async {
            let a = mcp.call("resources/read", json!({"uri": "skill://pdf-processing/templates/credit-note.md"})).await;
            (a.error_code() == Some(-32602)).then_some(())
        },
    )
    .await;
}

#[tokio::test]
async fn a_broken_skill_md_is_named_and_the_rest_still_served() {
    let t = tree();
    let root = t.path().join("skills");
    write(&root, "no-frontmatter/SKILL.md", "# Just a body\n");
    write(&root, "bad-yaml/SKILL.md", "---\nname: bad-yaml\ndescription: [unclosed\n---\n");
    write(&root, "no-description/SKILL.md", "---\nname: no-description\n---\n");
    let server = start(&t, 0);
    let skills = list(&server.mcp()).await;
    assert_eq!(uris(&skills), ["skill://acme/billing/refunds/SKILL.md", "skill://pdf-processing/SKILL.md"]);
    server.log_line("no-frontmatter/SKILL.md: missing frontmatter: SKILL.md must begin with a `---` line").await;
    let yaml = server.log_line("bad-yaml/SKILL.md: line ").await;
    assert!(yaml.contains("invalid YAML"), "{yaml}");
    server.log_line("no-description/SKILL.md: `description` is missing").await;

    // `check` lists the same problems and still succeeds: they are the files', not the config's.
    let config = server.config_path.to_string_lossy().into_owned();
    let out = mcp_e2e::run(None, &["check", "--config", &config], &[]);
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{text}");
    assert!(text.contains("left out: no-frontmatter/SKILL.md: missing frontmatter"), "{text}");
}

#[tokio::test]
async fn a_missing_root_stops_the_start_with_the_key() {
    let (status, log) = Server::start_failing(
        "[[adapters]]\nname = \"skills\"\nkind = \"skills\"\nroot = \"/nonexistent/skills\"\n",
        &[],
    );
    assert!(!status.success());
    assert!(log.contains("adapters.skills.root: /nonexistent/skills cannot be read"), "{log}");
}

#[tokio::test]
async fn an_mcp_upstreams_skills_pass_through() {
    let t = tree();
    let upstream = start(&t, 0);
    let proxy = Server::start(&format!(
        "[[adapters]]\nname = \"upstream\"\nkind = \"mcp\"\nurl = \"{}\"\nprefix = \"up_\"\ndeny = [\"refunds\"]\n",
        upstream.url
    ));
    let mcp = proxy.mcp();
    let discover = mcp.call("server/discover", json!({})).await;
    assert_eq!(
        discover.result()["capabilities"]["extensions"]["io.modelcontextprotocol/skills"],
        json!({"directoryRead": true}),
        "{}",
        discover.message()
    );
    // The upstream's entries as they are (URIs, frontmatter, digests); `deny` selects by name.
    let ours = list(&mcp).await;
    let theirs = list(&upstream.mcp()).await;
    assert_eq!(uris(&ours), ["skill://pdf-processing/SKILL.md"]);
    assert_eq!(ours[0], theirs[1]);
    // Files are read through the upstream, and are the bytes the digests describe.
    for r in ours[0]["resources"].as_array().unwrap() {
        let read = mcp.call("resources/read", json!({"uri": r["uri"]})).await;
        let text = read.result()["contents"][0]["text"].as_str().unwrap_or_else(|| panic!("{}", read.message()));
        assert_eq!(sha256(text.as_bytes()), r["digest"], "{}", r["uri"]);
    }
    let get = mcp.call("skills/get", json!({"uri": "skill://pdf-processing/SKILL.md"})).await;
    assert_eq!(get.result()["skill"], ours[0]);
    // Directories follow from the manifest.
    let dir = mcp.call("resources/directory/read", json!({"uri": "skill://pdf-processing"})).await;
    let names: Vec<&str> =
        dir.result()["resources"].as_array().unwrap().iter().map(|c| c["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["SKILL.md", "references", "templates"], "{}", dir.message());
    let denied = mcp.call("skills/get", json!({"uri": "skill://acme/billing/refunds/SKILL.md"})).await;
    assert_eq!(denied.error_code(), Some(-32602));
}

#[tokio::test]
async fn a_resource_rule_on_a_skill_md_gates_the_skill() {
    let t = tree();
    let server = Server::start(&format!(
        "[[adapters]]\nname = \"skills\"\nkind = \"skills\"\nroot = \"{}\"\n\n[auth]\n[[auth.tokens]]\nsubject = \"ada\"\n\
         secret = \"skills-token-of-ada-0123456789\"\n[auth.resources.\"skill://acme/billing/refunds/SKILL.md\"]\n\
         scopes = [\"billing\"]\n",
        t.path().join("skills").display()
    ));
    let mcp = server.mcp().with_header("authorization", "Bearer skills-token-of-ada-0123456789");
    let page = mcp.call("skills/list", json!({})).await;
    let skills = page.result()["skills"].as_array().unwrap().clone();
    assert_eq!(uris(&skills), ["skill://pdf-processing/SKILL.md"], "a caller without the scope does not see it");
    assert_eq!(page.result()["cacheScope"], "private");
    for method in ["skills/get", "resources/read"] {
        let a = mcp.call(method, json!({"uri": "skill://acme/billing/refunds/SKILL.md"})).await;
        assert_eq!(a.status, 403, "{method}: {}", a.message());
    }
    let open = mcp.call("skills/get", json!({"uri": "skill://pdf-processing/SKILL.md"})).await;
    assert_eq!(open.status, 200, "{}", open.message());
}
