//! The run ID that names a run's namespace, objects and evidence.

/// A run ID: the current time in seconds, base 36, then 4 random base-36 characters (short,
/// sortable by start time, DNS-safe, distinct for runs started in the same second).
pub fn new_run_id() -> String {
    use std::hash::{BuildHasher, Hasher};
    const DIGITS: &[u8] = b"0123456789abcdefghijklmnopqrstuvwxyz";
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    let mut s = Vec::new();
    let mut n = now.as_secs();
    while n > 0 {
        s.push(DIGITS[(n % 36) as usize]);
        n /= 36;
    }
    s.reverse();
    // RandomState is seeded randomly per process; the nanoseconds and a counter tell runs of
    // one process apart.
    static COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(now.as_nanos());
    h.write_u32(std::process::id());
    h.write_u64(COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed));
    let mut r = h.finish();
    for _ in 0..4 {
        s.push(DIGITS[(r % 36) as usize]);
        r /= 36;
    }
    String::from_utf8(s).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_ids_are_distinct_within_one_second() {
        let ids: std::collections::BTreeSet<String> = (0..50).map(|_| new_run_id()).collect();
        assert_eq!(ids.len(), 50);
        for id in &ids {
            assert!(
                id.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit()),
                "{id}"
            );
        }
    }
}
