//! Simulated virtual time: milliseconds since a fixed epoch, rendered as RFC 3339.

/// Virtual time in milliseconds since [`EPOCH_UNIX_SECONDS`].
pub type Millis = u64;

/// The simulated clock's zero: 2025-01-01T00:00:00Z, as Unix seconds.
pub const EPOCH_UNIX_SECONDS: u64 = 1_735_689_600;

/// Unix time in seconds (fractional) of a virtual instant.
pub fn unix_seconds(t: Millis) -> f64 {
    EPOCH_UNIX_SECONDS as f64 + t as f64 / 1000.0
}

/// The virtual instant `t` as a timestamp (millisecond precision).
fn timestamp(t: Millis) -> jiff::Timestamp {
    let ms = (EPOCH_UNIX_SECONDS * 1000).saturating_add(t);
    // Virtual time far beyond year 9999 is not representable; it never occurs in a run.
    jiff::Timestamp::from_millisecond(i64::try_from(ms).unwrap_or(i64::MAX)).unwrap_or(jiff::Timestamp::MAX)
}

/// RFC 3339 with second precision (`metav1.Time`), e.g. `2025-01-01T00:00:05Z`.
pub fn rfc3339(t: Millis) -> String {
    format!("{:.0}", timestamp(t - t % 1000))
}

/// RFC 3339 with microseconds (`metav1.MicroTime`, log timestamps).
pub fn rfc3339_micros(t: Millis) -> String {
    format!("{:.6}", timestamp(t))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_rfc3339() {
        assert_eq!(rfc3339(0), "2025-01-01T00:00:00Z");
        assert_eq!(rfc3339(5_999), "2025-01-01T00:00:05Z");
        assert_eq!(rfc3339(86_400_000 * 59 + 3_661_000), "2025-03-01T01:01:01Z");
        assert_eq!(rfc3339_micros(1_250), "2025-01-01T00:00:01.250000Z");
        assert_eq!(rfc3339_micros(2_000), "2025-01-01T00:00:02.000000Z");
        // Beyond what a timestamp holds: the largest one, not a panic.
        assert!(rfc3339(u64::MAX - 5).starts_with("9999-12-"));
    }
}
