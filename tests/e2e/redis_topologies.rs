//! Redis as users run it, with real servers started here: TLS (`rediss://`, a CA made by
//! the test) with an ACL user whose password comes from a file; a three-master Redis
//! Cluster (a two-key rate-limit script, tasks and pub/sub fan-out); and a Sentinel
//! failover under load: calls keep succeeding, rate-limit budgets and tasks survive.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use mcp_e2e::redis_topology::{Cluster, MASTER_NAME, SentinelSet, TlsFiles, TlsServer, cli};
use mcp_e2e::wait::eventually;
use mcp_e2e::{FIXTURES_CONFIG, Mcp, Server};
use serde_json::json;

use crate::redis_cluster::{metrics, watch_through_redis};
use crate::tls::{ca, leaf};

const KEY: &str = "QUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUE=";

/// A replica config: the fixtures, `[redis]` with `section`, then `extra`.
fn config(section: &str, extra: &str) -> String {
    format!(
        "{FIXTURES_CONFIG}\n[redis]\n{section}\ntimeout_ms = 300\nbreaker_open_ms = 500\n\
         [[request_state.keys]]\nid = \"k1\"\nsecret = \"{KEY}\"\n{extra}"
    )
}

fn replicas(n: usize, section: &str, extra: &str) -> Vec<Server> {
    (0..n).map(|_| Server::start_with(&config(section, extra), &[("RUST_LOG", "info")])).collect()
}

/// `echo` may be called three times per caller, cluster-wide; its global budget is a second
/// key of the same script (both must hash to one cluster slot).
const ECHO_BUDGET: &str = "[rate_limits.tools.echo]\nper_caller = { rate = 1, per_ms = 600000, burst = 3 }\n\
                           global = { rate = 1000, per_ms = 1000 }\n";

/// Spends `echo`'s budget across `nodes` and checks every replica then refuses.
async fn budget_is_shared(nodes: &[Server]) {
    for i in 0..3 {
        let a = nodes[i % nodes.len()].mcp().tool("echo", json!({"text": format!("call {i}")})).await;
        assert_eq!(a.status, 200, "call {i} is within the budget: {:?}", a.messages);
    }
    for node in nodes {
        let a = node.mcp().tool("echo", json!({"text": "one too many"})).await;
        assert_eq!((a.status, a.error_code()), (429, Some(-31029)), "the budget is shared: {:?}", a.messages);
    }
}

fn tasks(node: &Server) -> Mcp {
    node.mcp().with_capabilities(json!({"extensions": {"io.modelcontextprotocol/tasks": {}}}))
}

/// Creates a short task on `on` and returns its id once `from` reads it completed.
async fn task_completes_across(on: &Server, from: &Server) -> String {
    let created = tasks(on).tool("slow_compute", json!({"seconds": 0.1, "label": "shared"})).await;
    let id = created.result()["taskId"].as_str().unwrap().to_owned();
    completed_on(from, &id, Duration::from_secs(10)).await;
    id
}

async fn completed_on(node: &Server, id: &str, within: Duration) {
    let mcp = tasks(node);
    eventually(
        within,
        || format!("task {id} is not completed on {}:\n{}", node.addr, node.stderr()),
        || async {
            // While Redis is failing over, a task held there cannot be read (-32603): retry.
            let answer = mcp.call("tasks/get", json!({"taskId": id})).await;
            (answer.error_code().is_none() && answer.result()["status"] == "completed").then_some(())
        },
    )
    .await;
}

#[tokio::test]
async fn tls_with_an_acl_user_shares_state_and_bad_credentials_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let ca = ca();
    let (cert, key, _) = leaf(&ca);
    let files =
        TlsFiles { ca: dir.path().join("ca.pem"), cert: dir.path().join("cert.pem"), key: dir.path().join("key.pem") };
    for (path, pem) in [(&files.ca, &ca.pem), (&files.cert, &cert), (&files.key, &key)] {
        std::fs::write(path, pem).unwrap();
    }
    let server = TlsServer::start(&files, "mcp", "s3cret-pw");
    let password = dir.path().join("password");
    std::fs::write(&password, "s3cret-pw\n").unwrap();
    let url = format!("rediss://127.0.0.1:{}", server.node.port);
    let section = |password: &str, ca: &str| format!("url = \"{url}\"\nusername = \"mcp\"\n{password}\n{ca}");
    let good = section(
        &format!("password_file = \"{}\"", password.display()),
        &format!("tls_ca_file = \"{}\"", files.ca.display()),
    );
    let nodes = replicas(2, &good, ECHO_BUDGET);
    budget_is_shared(&nodes).await;
    task_completes_across(&nodes[0], &nodes[1]).await;
    assert!(!nodes[0].stderr().contains("redis unavailable"), "{}", nodes[0].stderr());

    // A wrong password and an untrusted certificate: the replica serves from local state
    // and its log says what is wrong.
    let ca_line = format!("tls_ca_file = \"{}\"", files.ca.display());
    for (section, why) in [
        (section("password = \"wrong\"", &ca_line), "authentication failed"),
        (section(&format!("password_file = \"{}\"", password.display()), ""), "certificate"),
    ] {
        // A generous timeout: the failure named must be the server's answer, not a slow machine.
        let config = config(&section, ECHO_BUDGET).replace("timeout_ms = 300", "timeout_ms = 5000");
        let node = Server::start_with(&config, &[("RUST_LOG", "info")]);
        for i in 0..3 {
            assert_eq!(node.mcp().tool("echo", json!({"text": format!("{i}")})).await.status, 200);
        }
        let line = node.log_line("redis unavailable").await;
        assert!(line.contains(why), "the log names the cause ({why}): {line}");
    }
}

#[tokio::test]
async fn a_three_master_cluster_shares_limits_tasks_and_fan_out() {
    let cluster = Cluster::start();
    let urls = cluster.urls();
    let section = format!("mode = \"cluster\"\nurl = \"{}\"\nnodes = [\"{}\", \"{}\"]", urls[0], urls[1], urls[2]);
    let nodes = replicas(3, &section, ECHO_BUDGET);
    budget_is_shared(&nodes).await;
    for _ in 0..6 {
        task_completes_across(&nodes[0], &nodes[2]).await;
    }
    let mut stream = watch_through_redis(&nodes[2].mcp(), &nodes[0].mcp(), "faults://cluster").await;
    drop(stream.next(Duration::from_millis(10)).await);
    // The keys are spread over the masters: this really is a cluster, not one node.
    let holding = cluster.nodes.iter().filter(|n| cli(n.port, &["dbsize"]) != "0").count();
    // Which keys sit where, should this fail (seen once, not understood yet).
    let keys = || -> Vec<String> { cluster.nodes.iter().map(|n| cli(n.port, &["--scan"])).collect() };
    assert!(holding >= 2, "keys on {holding} of 3 masters: {:?}", keys());
    for node in &nodes {
        assert!(!node.stderr().contains("redis unavailable"), "no CROSSSLOT or MOVED failure:\n{}", node.stderr());
    }
    assert!(metrics(&nodes[0]).await.contains("mcp_rate_limited_total{scope=\"per_caller\"} 1"));
}

#[tokio::test]
async fn a_sentinel_failover_under_load_keeps_calls_rate_limits_and_tasks() {
    let mut set = SentinelSet::start();
    let section = format!(
        "mode = \"sentinel\"\nmaster_name = \"{MASTER_NAME}\"\nurl = \"redis://127.0.0.1:{}\"",
        set.sentinel.port
    );
    // `add` has a small budget to survive the failover; every `echo` runs the Redis script.
    let limits = "[rate_limits.tools.add]\nper_caller = { rate = 1, per_ms = 600000, burst = 2 }\n\
                  [rate_limits.tools.echo]\nper_caller = { rate = 100000, per_ms = 1000 }\n";
    let nodes = Arc::new(replicas(3, &section, limits));
    for i in 0..2 {
        assert_eq!(nodes[i].mcp().tool("add", json!({"a": i, "b": 1})).await.status, 200);
    }
    assert_eq!(nodes[2].mcp().tool("add", json!({"a": 9, "b": 1})).await.status, 429);
    let task = task_completes_across(&nodes[0], &nodes[1]).await;
    assert_eq!(cli(set.master.port, &["wait", "1", "2000"]), "1", "the replica has every write");

    // Load: six callers in a loop over the three replicas.
    let stop = Arc::new(AtomicBool::new(false));
    let (ok, failed) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
    let workers: Vec<_> = (0..6)
        .map(|w| {
            let (nodes, stop, ok, failed) = (nodes.clone(), stop.clone(), ok.clone(), failed.clone());
            tokio::spawn(async move {
                let mut i = w;
                while !stop.load(Ordering::Relaxed) {
                    let a = nodes[i % 3].mcp().tool("echo", json!({"text": format!("w{w} {i}")})).await;
                    if a.status == 200 && a.error_code().is_none() && a.result()["isError"] != true {
                        ok.fetch_add(1, Ordering::Relaxed);
                    } else {
                        eprintln!("failed call during the failover: {} {:?}", a.status, a.messages);
                        failed.fetch_add(1, Ordering::Relaxed);
                    }
                    i += 1;
                }
            })
        })
        .collect();
    tokio::time::sleep(Duration::from_secs(1)).await;
    let before = ok.load(Ordering::Relaxed);
    set.master.kill();
    let killed = Instant::now();
    let promoted = set.replica.port;
    while set.master_port() != promoted {
        assert!(killed.elapsed() < Duration::from_secs(30), "the sentinel did not promote the replica");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let failover = killed.elapsed();
    // The replicas find the new master, then the load goes on for a while.
    for node in nodes.iter() {
        completed_on(node, &task, Duration::from_secs(15)).await;
    }
    tokio::time::sleep(Duration::from_secs(2)).await;
    stop.store(true, Ordering::Relaxed);
    for w in workers {
        w.await.unwrap();
    }
    let (ok, failed) = (ok.load(Ordering::Relaxed), failed.load(Ordering::Relaxed));
    eprintln!("failover in {failover:?}; {ok} calls succeeded ({before} before the kill), {failed} failed");
    assert!(ok > before + 50, "calls kept succeeding after the kill: {before} → {ok}");
    assert!(failed <= 6, "at most the calls in flight at the kill fail: {failed}");
    // The task was read from the new master on every replica (above); the spent budget of
    // `add` survived too.
    for node in nodes.iter() {
        assert_eq!(node.mcp().tool("add", json!({"a": 1, "b": 1})).await.status, 429, "budget survived");
        assert!(node.stderr().contains("redis is reachable again"), "{}", node.stderr());
    }
}
