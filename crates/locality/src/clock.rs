//! The time reports are stamped with and exemptions expire by.
//!
//! The clock is the system's, unless `SOURCE_DATE_EPOCH` (the reproducible-builds
//! convention: seconds since 1970-01-01 UTC) is set: then every report made by this
//! process carries that time, and `.locality.yaml` exemptions expire by that day. Tests set
//! it so that snapshots and expiry checks do not depend on the day they run.

/// The variable that fixes the clock.
pub const SOURCE_DATE_EPOCH: &str = "SOURCE_DATE_EPOCH";

/// Now: `SOURCE_DATE_EPOCH` when set to a valid number of seconds, else the system clock;
/// whole seconds.
pub fn now() -> jiff::Timestamp {
    let fixed = std::env::var(SOURCE_DATE_EPOCH)
        .ok()
        .and_then(|v| v.trim().parse::<i64>().ok())
        .and_then(|s| jiff::Timestamp::from_second(s).ok());
    match fixed {
        Some(t) => t,
        None => {
            let t = jiff::Timestamp::now();
            jiff::Timestamp::from_second(t.as_second()).unwrap_or(t)
        }
    }
}

/// Now as RFC 3339 in UTC (`2026-12-03T17:31:41Z`).
pub fn now_rfc3339() -> String {
    now().to_string()
}

/// Today in UTC.
pub fn today() -> jiff::civil::Date {
    now().to_zoned(jiff::tz::TimeZone::UTC).date()
}
