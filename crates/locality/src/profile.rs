//! Phase timings on stderr when `LOCALITY_PROFILE=1` (used by `bench/run.sh`).
//!
//! Lines look like `locality-profile: phase=categorize seconds=0.123456`.

use std::time::Instant;

/// Records phase durations when enabled.
pub struct Profile {
    enabled: bool,
    last: Instant,
}

impl Profile {
    /// Enabled when the environment variable `LOCALITY_PROFILE` is `1`.
    pub fn from_env() -> Self {
        Profile {
            enabled: std::env::var_os("LOCALITY_PROFILE").is_some_and(|v| v == "1"),
            last: Instant::now(),
        }
    }
    /// Ends the current phase, naming it.
    pub fn phase(&mut self, name: &str) {
        let now = Instant::now();
        if self.enabled {
            eprintln!(
                "locality-profile: phase={name} seconds={:.6}",
                (now - self.last).as_secs_f64()
            );
        }
        self.last = now;
    }
}
