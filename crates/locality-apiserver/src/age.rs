//! Ages as `kubectl` prints them (`AGE` columns of `Table` answers).

use locality_sim::time::{Millis, rfc3339};

/// Virtual `now` minus a `metav1.Time` string, as `kubectl` prints ages (`HumanDuration`).
pub fn age(created: Option<&str>, now: Millis) -> String {
    let Some(created) = created else {
        return "<unknown>".into();
    };
    let now_s = rfc3339(now);
    let (Some(a), Some(b)) = (parse_rfc3339(created), parse_rfc3339(&now_s)) else {
        return "<unknown>".into();
    };
    human_duration(b.saturating_sub(a))
}

/// Seconds since 1970 of an RFC 3339 time (`YYYY-MM-DDTHH:MM:SSZ`).
fn parse_rfc3339(s: &str) -> Option<u64> {
    u64::try_from(s.parse::<jiff::Timestamp>().ok()?.as_second()).ok()
}

/// `k8s.io/apimachinery/pkg/util/duration.HumanDuration`.
pub fn human_duration(secs: u64) -> String {
    if secs < 120 {
        return format!("{secs}s");
    }
    let minutes = secs / 60;
    if minutes < 10 {
        let s = secs % 60;
        return if s == 0 {
            format!("{minutes}m")
        } else {
            format!("{minutes}m{s}s")
        };
    }
    if minutes < 180 {
        return format!("{minutes}m");
    }
    let hours = secs / 3600;
    if hours < 8 {
        let m = minutes % 60;
        return if m == 0 {
            format!("{hours}h")
        } else {
            format!("{hours}h{m}m")
        };
    }
    if hours < 48 {
        return format!("{hours}h");
    }
    if hours < 24 * 8 {
        let h = hours % 24;
        return if h == 0 {
            format!("{}d", hours / 24)
        } else {
            format!("{}d{h}h", hours / 24)
        };
    }
    if hours < 24 * 365 * 2 {
        return format!("{}d", hours / 24);
    }
    if hours < 24 * 365 * 8 {
        let dy = (hours / 24) % 365;
        return if dy == 0 {
            format!("{}y", hours / 24 / 365)
        } else {
            format!("{}y{dy}d", hours / 24 / 365)
        };
    }
    format!("{}y", hours / 24 / 365)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ages() {
        assert_eq!(human_duration(5), "5s");
        assert_eq!(human_duration(150), "2m30s");
        assert_eq!(human_duration(3600 * 5 + 60), "5h1m");
        assert_eq!(age(Some("2025-01-01T00:00:00Z"), 65_000), "65s");
        assert_eq!(parse_rfc3339("1970-01-02T00:00:01Z"), Some(86_401));
    }
}
