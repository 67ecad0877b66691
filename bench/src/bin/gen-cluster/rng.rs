//! A tiny deterministic PRNG (SplitMix64) and helpers. No dependencies, so the
//! generated clusters are identical for a seed on every platform and release.

/// SplitMix64: fast, statistically fine for synthetic data, and trivially seedable.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// An independent stream for object `index` of `kind`. Every object draws from its
    /// own stream, so its content does not depend on how many objects came before it
    /// (e.g. pods are identical whatever `--nodes` is, except where they are placed).
    pub fn stream(seed: u64, kind: u64, index: u64) -> Self {
        let mut r = Rng(seed ^ kind.wrapping_mul(0xA24B_AED4_963E_E407));
        r.0 ^= index.wrapping_mul(0x9FB2_1C65_1E98_DF25);
        r.next_u64();
        r
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (`n > 0`).
    pub fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as u64
    }

    /// Uniform in `lo..=hi`.
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.below(hi - lo + 1)
    }

    /// Uniform in `[0, 1)`.
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// True with probability `p`.
    pub fn chance(&mut self, p: f64) -> bool {
        self.unit() < p
    }

    /// A random element of `xs` (non-empty).
    pub fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.below(xs.len() as u64) as usize]
    }

    /// `n` lowercase alphanumerics as Kubernetes uses for generated name suffixes
    /// (consonants and digits, no vowels).
    pub fn suffix(&mut self, n: usize) -> String {
        const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
        (0..n)
            .map(|_| ALPHABET[self.below(ALPHABET.len() as u64) as usize] as char)
            .collect()
    }

    /// `n` lowercase hex digits.
    pub fn hex(&mut self, n: usize) -> String {
        const HEX: &[u8] = b"0123456789abcdef";
        (0..n)
            .map(|_| HEX[(self.next_u64() & 15) as usize] as char)
            .collect()
    }

    /// A version-4 UUID.
    pub fn uuid(&mut self) -> String {
        let a = self.hex(8);
        let b = self.hex(4);
        let c = self.hex(3);
        let d = self.hex(3);
        let e = self.hex(12);
        let v = ["8", "9", "a", "b"][self.below(4) as usize];
        format!("{a}-{b}-4{c}-{v}{d}-{e}")
    }
}

/// RFC 3339 UTC timestamp (`2026-11-02T08:15:42Z`) for seconds since the Unix epoch.
pub fn timestamp(secs: i64) -> String {
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps() {
        assert_eq!(timestamp(0), "1970-01-01T00:00:00Z");
        assert_eq!(timestamp(1_798_761_600), "2027-01-01T00:00:00Z");
        assert_eq!(timestamp(1_709_210_096), "2024-02-29T12:34:56Z");
    }

    #[test]
    fn deterministic_streams() {
        let a: Vec<u64> = (0..4).map(|_| Rng::stream(1, 2, 3).next_u64()).collect();
        assert!(a.windows(2).all(|w| w[0] == w[1]));
        assert_ne!(Rng::stream(1, 2, 3).next_u64(), Rng::stream(1, 2, 4).next_u64());
    }
}
