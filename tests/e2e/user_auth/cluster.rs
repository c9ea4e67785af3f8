//! Connections across replicas: three replicas sharing one Redis behind a real nginx running
//! the shipped round-robin config, browsers reaching them through nginx. The connect flow's
//! steps land on different replicas, the grant is in Redis for all of them, and a replica
//! whose vault key ring differs cannot open it (it asks the caller to connect again, and says
//! why in its log). Each replica's console lists the connection from the Redis index, and
//! one removed on one replica is gone from every listing.
//!
//! Needs nginx and Redis (containers) like `cluster`; under `behind_nginx::` so tests/run.sh
//! runs it in that step, one at a time.

mod behind_nginx {
    use std::net::SocketAddr;

    use mcp_e2e::Server;
    use mcp_e2e::issuer::Issuer;
    use mcp_e2e::nginx::Nginx;
    use mcp_e2e::redis::RedisServer;
    use serde_json::json;

    use super::super::console::{ADMIN, CONSOLE};
    use super::super::{Caller, ENV, config, connect};
    use crate::cluster::CLUSTER;
    use crate::token_exchange::{claims, recorder, token_for};

    const RING: &str = "bG9hZHRlc3QtY2x1c3Rlci1rZXktMzItYnl0ZXMhISE=";
    const VAULT_KEY: &str = "dmF1bHQta2V5LW9mLXRoZS1jbHVzdGVyLTMyLWJ5dGU=";
    const OTHER_VAULT_KEY: &str = "b3RoZXItdmF1bHQta2V5LW9mLWEtcmVwbGljYS0zMmI=";

    fn replica(base: &str, n: usize, redis: &str, vault: (&str, &str)) -> String {
        let (id, key) = vault;
        format!(
            "{}\n[redis]\nurl = \"{redis}\"\n[[request_state.keys]]\nid = \"cluster\"\nsecret = \"{RING}\"\n\
             [[user_auth.vault_keys]]\nid = \"{id}\"\nsecret = \"{key}\"\n",
            base.replacen("name = \"mcp-e2e\"", &format!("name = \"replica-{n}\""), 1)
        )
    }

    #[test]
    fn the_flow_lands_on_any_replica_and_every_replica_uses_the_connection() {
        let _one = CLUSTER.lock().unwrap_or_else(|e| e.into_inner());
        let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
        let redis = runtime.block_on(RedisServer::start());
        let (upstream, seen) = runtime.block_on(recorder());
        // nginx first: its address is where browsers come back (the replicas' public_url).
        let ports = mcp_e2e::redis::free_ports(4);
        let addrs: Vec<SocketAddr> = ports[..3].iter().map(|p| SocketAddr::from(([127, 0, 0, 1], *p))).collect();
        let nginx = Nginx::start(&addrs);
        let public = format!("http://{}", nginx.addr);
        let callback = format!("{public}/oauth/callback");
        let idp = Issuer::with_web_client(&[&callback]);
        let partner = Issuer::with_web_client(&[&callback]);
        let base = format!("{}{CONSOLE}", config(&idp, &partner, &upstream, &public));
        let replicas: Vec<Server> = (0..3)
            .map(|i| {
                let cfg = replica(&base, i + 1, &redis.url, ("v1", VAULT_KEY));
                Server::start_on(&cfg, &ENV, &format!("127.0.0.1:{}", ports[i]))
            })
            .collect();

        runtime.block_on(async {
            let token = token_for(&idp, "ada").await;
            let through = |mcp: mcp_e2e::Mcp| Caller {
                mcp: mcp.with_capabilities(json!({"elicitation": {"url": {}}})),
                token: token.clone(),
            };
            let ada = through(nginx.mcp());
            let (link, retry) = ada.asked("whoami", "partner").await;
            assert!(link.starts_with(&format!("{public}/oauth/start?link=")), "{link}");
            let page = connect(&link, "ada").await;
            assert_eq!(page.status, 200, "{}", page.text());

            // The start and the two callbacks went through nginx to more than one replica.
            let flow: Vec<String> = nginx.access_log().into_iter().flat_map(|a| a.upstreams).collect();
            let distinct: std::collections::BTreeSet<&String> = flow.iter().collect();
            assert!(distinct.len() >= 2, "the flow's requests reached one replica only: {flow:?}");

            let done = ada.call("whoami", retry).await;
            assert_eq!(done.result()["resultType"], "complete", "{}", done.message());
            // Every replica, asked directly, calls as ada with the connection in Redis.
            for r in &replicas {
                let direct = through(r.mcp());
                let answer = direct.call("whoami", json!({})).await;
                assert_eq!(answer.result()["resultType"], "complete", "{}", answer.message());
            }
            let all = seen.lock().unwrap().clone();
            assert_eq!(all.len(), 4, "{all:?}");
            assert!(all.iter().all(|a| claims(a)["sub"] == "ada" && *a == all[0]), "one token, everywhere");

            // A replica with another vault key ring cannot open the entry: it asks again.
            let odd = Server::start_on(
                &replica(&base, 4, &redis.url, ("v2", OTHER_VAULT_KEY)),
                &ENV,
                &format!("127.0.0.1:{}", ports[3]),
            );
            let asked = through(odd.mcp()).call("whoami", json!({})).await;
            assert_eq!(asked.result()["resultType"], "input_required", "{}", asked.message());
            let log = odd.log_line("a stored connection was refused").await;
            assert!(log.contains("sealed with key 'v1', which is not in this replica's vault_keys"), "{log}");

            // The consoles: every replica lists the connection; the odd one cannot open it.
            let ada_key = format!("{}#ada", idp.url);
            let listed = |s: &Server| {
                let url = format!("http://{}/console/api/connections", s.addr);
                async move {
                    let res = reqwest::Client::new().get(url).bearer_auth(ADMIN).send().await.unwrap();
                    res.json::<serde_json::Value>().await.unwrap()
                }
            };
            for r in &replicas {
                let l = listed(r).await;
                assert_eq!(l["connections"][0]["caller"], ada_key.as_str(), "{l}");
                assert_eq!((l["connections"].as_array().unwrap().len(), l["shared"].clone()), (1, json!(true)), "{l}");
            }
            let l = listed(&odd).await;
            assert_eq!(
                (l["connections"].as_array().unwrap().len(), l["sealed_elsewhere"].clone()),
                (0, json!(1)),
                "{l}"
            );
            // Removed on one replica, gone from every listing.
            let removed = reqwest::Client::new()
                .post(format!("http://{}/console/api/connections/revoke", replicas[2].addr))
                .bearer_auth(ADMIN)
                .json(&json!({"caller": ada_key, "upstream": "partner"}))
                .send()
                .await
                .unwrap();
            assert_eq!(removed.status(), 200);
            for s in replicas.iter().chain([&odd]) {
                let l = listed(s).await;
                assert_eq!((l["connections"].clone(), l["sealed_elsewhere"].clone()), (json!([]), json!(0)), "{l}");
            }
            assert_eq!(through(odd.mcp()).call("whoami", json!({})).await.result()["resultType"], "input_required");
        });
        drop(replicas);
        drop(redis);
    }
}
