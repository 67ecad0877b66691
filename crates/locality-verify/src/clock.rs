//! The cluster's clock: every poll, settle and timeout of a run is in the time of the cluster
//! it runs against, so a run waits as long as the cluster needs, no more. A real cluster's
//! clock is the wall clock. The **simulated** API server runs its cluster `speed` times faster
//! than the wall clock and says so at `GET /simulated/clock` (`unixMs`, `speed`): a run
//! against it sleeps `d / speed` of wall time for `d` of cluster time, and a deadline has
//! passed only once the server's own clock is past it (a server too loaded to keep its speed
//! slips, and a run then waits longer in wall time, never less in cluster time).

use std::sync::Mutex;
use std::time::Duration;

use tokio::time::Instant;

/// The clock of the cluster a run is against.
#[derive(Debug)]
pub struct ClusterClock {
    /// Cluster seconds per wall second (1 on a real cluster).
    speed: f64,
    /// Simulated: the server's clock (unix ms) as last read, and when.
    read: Option<Mutex<(f64, Instant)>>,
}

/// A point in the cluster's time by which something must have happened.
#[derive(Debug, Clone, Copy)]
pub struct Deadline {
    /// The wall-clock instant the deadline is estimated to pass at (never before it does).
    wall: Instant,
    /// Simulated: the deadline in the server's clock (unix ms).
    cluster_ms: Option<f64>,
}

impl ClusterClock {
    /// The wall clock (a real cluster).
    pub fn wall() -> Self {
        ClusterClock {
            speed: 1.0,
            read: None,
        }
    }

    /// A simulated cluster's clock, read at `unix_ms` just now, running `speed`× wall time.
    pub fn simulated(unix_ms: f64, speed: f64) -> Self {
        let speed = if speed.is_finite() && speed > 0.0 {
            speed
        } else {
            1.0
        };
        ClusterClock {
            speed,
            read: Some(Mutex::new((unix_ms, Instant::now()))),
        }
    }

    /// Cluster seconds per wall second.
    pub fn speed(&self) -> f64 {
        self.speed
    }

    /// `d` of cluster time in wall time (at least a millisecond when `d` is not zero).
    pub fn wall_time(&self, d: Duration) -> Duration {
        if d.is_zero() {
            return d;
        }
        d.div_f64(self.speed).max(Duration::from_millis(1))
    }

    /// Sleeps `d` of cluster time.
    pub async fn sleep(&self, d: Duration) {
        tokio::time::sleep(self.wall_time(d)).await;
    }

    /// The deadline `d` of cluster time from now.
    pub fn deadline(&self, d: Duration) -> Deadline {
        let wall = Instant::now() + self.wall_time(d);
        let cluster_ms = self.estimate().map(|now| now + d.as_secs_f64() * 1000.0);
        Deadline { wall, cluster_ms }
    }

    /// The server's time (unix ms) estimated from its last read: never behind it, since the
    /// simulated clock can only run slower than its speed, not faster.
    fn estimate(&self) -> Option<f64> {
        let read = self.read.as_ref()?;
        let (at, when) = *read.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        Some(at + when.elapsed().as_secs_f64() * 1000.0 * self.speed)
    }

    /// A fresh reading of the server's clock (simulated only), used to decide a deadline
    /// that the estimate says has passed.
    pub fn observe(&self, unix_ms: f64) {
        if let Some(read) = &self.read {
            *read.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = (unix_ms, Instant::now());
        }
    }

    /// Now in the cluster's clock (ms since the epoch): the simulated server's clock as
    /// estimated from its last read, else the wall clock.
    pub fn now_ms(&self) -> u128 {
        match self.estimate() {
            Some(ms) if ms.is_finite() && ms >= 0.0 => ms as u128,
            _ => std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_millis()),
        }
    }

    /// Whether the estimate says `d` has passed. On a simulated cluster the caller confirms
    /// with [`ClusterClock::confirmed`] after reading the server's clock.
    pub fn maybe_passed(&self, d: &Deadline) -> bool {
        match (d.cluster_ms, self.estimate()) {
            (Some(end), Some(now)) => now >= end,
            _ => Instant::now() >= d.wall,
        }
    }

    /// Whether `d` has passed by the server's clock as last [observed](ClusterClock::observe)
    /// (the wall clock on a real cluster).
    pub fn confirmed(&self, d: &Deadline) -> bool {
        match (d.cluster_ms, &self.read) {
            (Some(end), Some(read)) => {
                read.lock().unwrap_or_else(std::sync::PoisonError::into_inner).0 >= end
            }
            _ => Instant::now() >= d.wall,
        }
    }

    /// Whether the clock is a simulated server's (and must be read to confirm a deadline).
    pub fn is_simulated(&self) -> bool {
        self.read.is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cluster_time_is_divided_by_the_speed() {
        let c = ClusterClock::simulated(0.0, 50.0);
        assert_eq!(c.wall_time(Duration::from_secs(5)), Duration::from_millis(100));
        assert_eq!(c.wall_time(Duration::ZERO), Duration::ZERO);
        assert_eq!(c.wall_time(Duration::from_micros(1)), Duration::from_millis(1));
        assert_eq!(
            ClusterClock::wall().wall_time(Duration::from_secs(5)),
            Duration::from_secs(5)
        );
        // A nonsense speed is the wall clock's.
        assert_eq!(ClusterClock::simulated(0.0, f64::NAN).speed(), 1.0);
    }

    #[test]
    fn a_deadline_passes_only_when_the_server_clock_is_past_it() {
        let c = ClusterClock::simulated(1_000_000.0, 1_000.0);
        let d = c.deadline(Duration::from_secs(10));
        std::thread::sleep(Duration::from_millis(20));
        // The estimate ran 20 s ahead: maybe passed …
        assert!(c.maybe_passed(&d));
        // … but the server says it is still 5 s before the deadline: not confirmed.
        c.observe(1_005_000.0);
        assert!(!c.confirmed(&d));
        c.observe(1_015_000.0);
        assert!(c.confirmed(&d));
    }
}
