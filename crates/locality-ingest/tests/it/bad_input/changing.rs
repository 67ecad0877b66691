//! Inputs that change while they are read: a large file truncated and rewritten under the
//! reader (log rotation, a `kubectl get > file` started again) gives a result or a clear
//! error, never a crash. A memory-mapped reader dies here with `SIGBUS`, which takes the
//! whole test binary down.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use locality_ingest::{ErrorKind, LoadOptions, load_paths};

/// A pretty-printed `List` of `n` Pods (large enough for the parallel reader).
fn pod_list(n: usize) -> Vec<u8> {
    let mut out = String::from("{\n    \"apiVersion\": \"v1\",\n    \"items\": [\n");
    for i in 0..n {
        if i > 0 {
            out.push_str(",\n");
        }
        out.push_str(&format!(
            "        {{\n            \"apiVersion\": \"v1\",\n            \"kind\": \"Pod\",\n            \"metadata\": {{\n                \"name\": \"pod-{i:07}\",\n                \"namespace\": \"default\",\n                \"labels\": {{\"app\": \"web\", \"padding\": \"{pad}\"}}\n            }},\n            \"spec\": {{\"nodeName\": \"node-{n}\"}},\n            \"status\": {{\"phase\": \"Running\", \"podIP\": \"10.{a}.{b}.{c}\"}}\n        }}",
            pad = "x".repeat(40),
            n = i % 50,
            a = (i >> 16) & 255,
            b = (i >> 8) & 255,
            c = i & 255,
        ));
    }
    out.push_str("\n    ],\n    \"kind\": \"List\",\n    \"metadata\": {\"resourceVersion\": \"\"}\n}\n");
    out.into_bytes()
}

#[test]
fn a_file_truncated_while_it_is_read_is_a_result_or_an_error_never_a_crash() {
    let dir = std::env::temp_dir().join(format!("locality-changing-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("dump.json");
    let full = pod_list(60_000);
    assert!(full.len() > 16 << 20, "{} bytes", full.len());
    std::fs::write(&path, &full).unwrap();
    let stop = AtomicBool::new(false);
    let (mut loaded, mut refused) = (0, 0);
    std::thread::scope(|s| {
        // The writer: cut the file to a fraction, then to nothing, then write it again.
        s.spawn(|| {
            let mut k = 0u64;
            while !stop.load(Ordering::Relaxed) {
                let f = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
                f.set_len(full.len() as u64 * (1 + k % 7) / 8).unwrap();
                std::thread::sleep(Duration::from_millis(2));
                f.set_len(0).unwrap();
                (&f).write_all(&full).unwrap();
                // Whole for a while: some reads see all of it.
                std::thread::sleep(Duration::from_millis(if k.is_multiple_of(2) { 300 } else { 0 }));
                k += 1;
            }
        });
        let until = Instant::now() + Duration::from_secs(4);
        while Instant::now() < until || loaded + refused < 5 {
            match load_paths(&[&path], &LoadOptions::default()) {
                Ok(l) => {
                    // What was read is one consistent content: a whole file parses to all
                    // of its pods.
                    assert_eq!(l.state.pods.len(), 60_000);
                    loaded += 1;
                }
                Err(e) => {
                    let shown = e.to_string();
                    assert!(shown.starts_with(&path.display().to_string()), "{shown}");
                    assert!(!shown.contains('\n'), "one line: {shown}");
                    assert!(
                        matches!(e.kind(), ErrorKind::Io | ErrorKind::Syntax | ErrorKind::Empty),
                        "{:?}: {shown}",
                        e.kind()
                    );
                    refused += 1;
                }
            }
        }
        stop.store(true, Ordering::Relaxed);
    });
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(loaded + refused >= 5);
    eprintln!("{loaded} loaded, {refused} refused");
}
