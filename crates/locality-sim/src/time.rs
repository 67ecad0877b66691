//! Simulated virtual time: milliseconds since a fixed epoch, rendered as RFC 3339.

/// Virtual time in milliseconds since [`EPOCH_UNIX_SECONDS`].
pub type Millis = u64;

/// The simulated clock's zero: 2025-01-01T00:00:00Z, as Unix seconds.
pub const EPOCH_UNIX_SECONDS: u64 = 1_735_689_600;

/// Unix time in seconds (fractional) of a virtual instant.
pub fn unix_seconds(t: Millis) -> f64 {
    EPOCH_UNIX_SECONDS as f64 + t as f64 / 1000.0
}

/// RFC 3339 with second precision (`metav1.Time`), e.g. `2025-01-01T00:00:05Z`.
pub fn rfc3339(t: Millis) -> String {
    let secs = EPOCH_UNIX_SECONDS + t / 1000;
    let (y, m, d) = civil_from_days((secs / 86_400) as i64);
    let rem = secs % 86_400;
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        (rem % 3600) / 60,
        rem % 60
    )
}

/// RFC 3339 with microseconds (`metav1.MicroTime`, log timestamps).
pub fn rfc3339_micros(t: Millis) -> String {
    let base = rfc3339(t);
    format!("{}.{:06}Z", &base[..base.len() - 1], (t % 1000) * 1000)
}

/// Days since 1970-01-01 to (year, month, day) (H. Hinnant's `civil_from_days`).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
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
    }
}
