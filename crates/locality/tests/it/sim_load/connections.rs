//! #38 point 4: 20,000 connections holding a partial request head (as many as this process
//! may open) do not wedge the server: the accept loop does not spin, memory stays bounded,
//! and a small client is answered within a second throughout.

use std::io::Write;
use std::net::TcpStream;
use std::time::{Duration, Instant};

use super::{MAX_KUBECTL, Probe, Server, spare_fds};

/// Connections opened (fewer when this process's file-descriptor limit is lower).
const CONNECTIONS: usize = 19_990;

#[test]
#[ignore = "load test (minutes, 20,000 sockets, measures memory and CPU): cargo nextest run -p locality --profile sim-load --run-ignored only"]
fn connections_holding_a_partial_header_do_not_wedge_the_server() {
    let mut server = Server::start("connections", &[]);
    let probe = Probe::start(&server.addr);
    let n = CONNECTIONS.min(spare_fds(64));
    let start = Instant::now();
    let mut held = Vec::with_capacity(n);
    let mut refused = 0usize;
    for _ in 0..n {
        match TcpStream::connect(&server.addr) {
            Ok(mut s) => {
                let _ = s.write_all(b"GET /api/v1/pods HTTP/1.1\r\nHost: x\r\n");
                held.push(s);
            }
            Err(_) => refused += 1,
        }
    }
    eprintln!(
        "{} connections holding a partial header opened in {:?} ({refused} refused); server has {} descriptors open",
        held.len(),
        start.elapsed(),
        server.open_fds()
    );
    // While they are held: the server idles (no accept loop spinning) and answers.
    std::thread::sleep(Duration::from_secs(2));
    let cpu_before = server.cpu();
    let window = Instant::now();
    std::thread::sleep(Duration::from_secs(5));
    let used = server.cpu() - cpu_before;
    let share = used.as_secs_f64() / window.elapsed().as_secs_f64();
    eprintln!("server CPU while they are held: {:.0}% of a core", share * 100.0);
    if let Some(took) = server.time_kubectl_get_pods() {
        assert!(took < MAX_KUBECTL, "kubectl get pods -A took {took:?}");
    }
    probe.finish("20,000 partial headers");
    assert!(
        share < 0.5,
        "the server used {:.0}% of a core while idle connections were held",
        share * 100.0
    );
    server.assert_alive_without_panic();
    server.assert_peak_rss_under_limit("20,000 partial headers");
    drop(held);
}
