//! Kubernetes resource quantities (`resource.Quantity`), reduced to CPU millicores.

/// Parses a CPU quantity (`"2"`, `"1500m"`, `"0.5"`, `"2k"`, `"1e3"`, `"1Ki"`) into
/// millicores, rounding up as `Quantity.MilliValue()` does. `None` when the text is not a
/// valid non-negative quantity or the value does not fit.
pub fn cpu_millis(text: &str) -> Option<u64> {
    let s = text.trim();
    if s.is_empty() {
        return None;
    }
    // Split the number from the suffix: the number is [+-]digits[.digits][(e|E)[+-]digits],
    // but a bare trailing `E` is the exa suffix, not an exponent.
    let bytes = s.as_bytes();
    let mut i = 0;
    if matches!(bytes.first(), Some(b'+' | b'-')) {
        i += 1;
    }
    let digits_start = i;
    while i < bytes.len() && (bytes[i].is_ascii_digit() || bytes[i] == b'.') {
        i += 1;
    }
    if i == digits_start {
        return None;
    }
    let mut exp: i32 = 0;
    let mut num_end = i;
    if i < bytes.len() && (bytes[i] == b'e' || bytes[i] == b'E') {
        let rest = &s[i + 1..];
        let (sign, digits) = match rest.as_bytes().first() {
            Some(b'+') => (1, &rest[1..]),
            Some(b'-') => (-1, &rest[1..]),
            _ => (1, rest),
        };
        if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
            exp = sign * digits.parse::<i32>().ok()?;
            num_end = i;
            i = s.len();
        }
    }
    let number: f64 = s[..num_end].parse().ok()?;
    let suffix = &s[i..];
    let mult: f64 = match suffix {
        "" => 1.0,
        "n" => 1e-9,
        "u" => 1e-6,
        "m" => 1e-3,
        "k" => 1e3,
        "M" => 1e6,
        "G" => 1e9,
        "T" => 1e12,
        "P" => 1e15,
        "E" => 1e18,
        "Ki" => 1024.0,
        "Mi" => 1024.0 * 1024.0,
        "Gi" => 1024.0 * 1024.0 * 1024.0,
        "Ti" => 1024.0f64.powi(4),
        "Pi" => 1024.0f64.powi(5),
        "Ei" => 1024.0f64.powi(6),
        _ => return None,
    };
    let millis = number * mult * 10f64.powi(exp) * 1000.0;
    if !millis.is_finite() || millis < 0.0 || millis > u64::MAX as f64 / 2.0 {
        return None;
    }
    // Round up, tolerating binary noise (0.1 * 1000 = 100.00000000000001).
    let rounded = millis.round();
    let v = if (millis - rounded).abs() < 1e-6 {
        rounded
    } else {
        millis.ceil()
    };
    Some(v as u64)
}

#[cfg(test)]
mod tests {
    use super::cpu_millis;

    #[test]
    fn quantities() {
        assert_eq!(cpu_millis("2"), Some(2000));
        assert_eq!(cpu_millis("1500m"), Some(1500));
        assert_eq!(cpu_millis("0.5"), Some(500));
        assert_eq!(cpu_millis("0.1"), Some(100));
        assert_eq!(cpu_millis("1e3"), Some(1_000_000));
        assert_eq!(cpu_millis("2k"), Some(2_000_000));
        assert_eq!(cpu_millis("1Ki"), Some(1_024_000));
        assert_eq!(cpu_millis("100u"), Some(1));
        assert_eq!(cpu_millis("3950m"), Some(3950));
        assert_eq!(cpu_millis("1M"), Some(1_000_000_000));
        assert_eq!(cpu_millis("1E"), None, "too large for millicores");
        assert_eq!(cpu_millis("abc"), None);
        assert_eq!(cpu_millis("2x"), None);
        assert_eq!(cpu_millis("-1"), None);
        assert_eq!(cpu_millis(""), None);
    }
}
