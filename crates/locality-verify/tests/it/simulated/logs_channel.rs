//! The logs channel: probes read from the client pods' logs, ten tries per second.

use locality_apiserver::ServeOptions;
use locality_live::LiveOptions;
use locality_sim::{DataPlaneProfile, SimConfig, Topology};
use locality_verify::Seen;
use std::time::Duration;

/// The `logs` channel: probe-loop pods on N1 and N3 dialling `C`'s Local Service, read through
/// `pods/log`: ≥ 10 tries per second, N1 answered by its own backend, N3 dropped (timeouts);
/// with a data plane on N3 ignoring the Local policy, N3's tries are answered.
fn logs_channel(profiles: &[(&str, &str)]) -> (Vec<locality_verify::Try>, Vec<locality_verify::Try>) {
    use locality_verify::cases::{Role, case};
    use locality_verify::cluster::Cluster;
    use locality_verify::fixture;
    use locality_verify::logs::ProbeLoop;
    let topology = Topology::builtin("four-nodes").unwrap();
    let mut serve = ServeOptions::from_topology(&topology, SimConfig::default()).unwrap();
    for (node, p) in profiles {
        serve
            .engine
            .set_profile(node, p.parse::<DataPlaneProfile>().unwrap());
    }
    serve.speed = 50.0;
    let running = locality_apiserver::serve(serve).unwrap();
    let live = LiveOptions {
        kubeconfig: Some(running.kubeconfig_path().to_path_buf()),
        ..LiveOptions::default()
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let (client, target) = locality_live::client(&live).await.unwrap();
        let cluster = Cluster::new(client, target.server.clone());
        let ns = "logs-channel";
        let setup = case("C").unwrap().setup;
        cluster
            .create("/api/v1/namespaces", &fixture::namespace(ns, "t", false))
            .await
            .unwrap();
        let pods = format!("/api/v1/namespaces/{ns}/pods");
        for (role, node) in [(Role::N1, "node-a"), (Role::N2, "node-b")] {
            cluster
                .create(&pods, &fixture::backend(ns, "t", &setup, role, node, true))
                .await
                .unwrap();
        }
        let svc = cluster
            .create(
                &format!("/api/v1/namespaces/{ns}/services"),
                &fixture::service(ns, "t", &setup),
            )
            .await
            .unwrap();
        let ip = svc["spec"]["clusterIP"].as_str().unwrap().to_string();
        let ready = |name: String| {
            let cluster = &cluster;
            let pods = pods.clone();
            async move {
                cluster
                    .wait_for(Duration::from_secs(30), Duration::from_millis(100), || async {
                        let p = cluster.get(&format!("{pods}/{name}")).await?.unwrap_or_default();
                        let ok = p["status"]["conditions"]
                            .as_array()
                            .into_iter()
                            .flatten()
                            .any(|c| c["type"] == "Ready" && c["status"] == "True");
                        Ok(ok.then_some(()))
                    })
                    .await
                    .unwrap()
                    .expect("Ready");
            }
        };
        ready(fixture::backend_name("b", Role::N1, true)).await;
        ready(fixture::backend_name("b", Role::N2, true)).await;
        tokio::time::sleep(Duration::from_millis(300)).await;
        let loops = [
            ProbeLoop::new("loop-n1", "node-a", &format!("{ip}:80")),
            ProbeLoop::new("loop-n3", "node-c", &format!("{ip}:80")),
        ];
        for l in &loops {
            cluster.create(&pods, &l.manifest(ns, "t")).await.unwrap();
        }
        // 20 virtual seconds at speed 50.
        tokio::time::sleep(Duration::from_millis(400)).await;
        let n1 = loops[0].tries(&cluster, ns).await.unwrap();
        let n3 = loops[1].tries(&cluster, ns).await.unwrap();
        (n1, n3)
    })
}

#[test]
fn the_logs_channel_keeps_ten_tries_per_second_through_answers_and_drops() {
    let (n1, n3) = logs_channel(&[]);
    for tries in [&n1, &n3] {
        assert!(tries.len() > 20, "{}", tries.len());
        let rate = locality_verify::logs::rate(tries);
        assert!(rate >= 10.0, "{rate} tries/s");
        assert!(tries.iter().all(|t| t.channel == "logs"));
    }
    assert!(
        n1.iter().all(|t| t.seen
            == Seen::Answer {
                responder: "b-be-n1".into()
            }),
        "{:?}",
        n1.iter().find(|t| t.seen
            != Seen::Answer {
                responder: "b-be-n1".into()
            })
    );
    assert!(
        n3.iter()
            .all(|t| t.seen == Seen::Timeout && t.received_ms >= t.sent_ms + 500)
    );
}

#[test]
fn the_logs_channel_sees_a_data_plane_ignoring_the_local_policy() {
    let (_, n3) = logs_channel(&[("node-c", "ignores-local-policy")]);
    assert!(
        n3.iter().any(|t| matches!(t.seen, Seen::Answer { .. })),
        "{:?}",
        &n3[..n3.len().min(3)]
    );
    assert!(locality_verify::logs::rate(&n3) >= 10.0);
}
