//! N1's phases on the cluster's clock, pure: what the EndpointSlice polls saw (each list
//! bracketed by two stamps) and what the EndpointSlice watch delivered (every change, in
//! order), merged into one [`Timeline`] the judge reads.
//!
//! The polls alone can miss a phase that starts and ends between two lists (a readiness
//! flap of the old backend), and a try falling in it would then be judged against the phase
//! around it. The watch misses nothing but says nothing of *when* on the cluster's clock; the
//! polls anchor its phases: a poll that showed a phase the watch delivered as the `j`-th
//! bounds the `j`-th phase's start from above (it had begun by the stamp after that list)
//! and the next phase's start from below (it had not begun by the stamp before that list).

/// N1's endpoints as a slice shows them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Phase {
    /// The old backend is ready.
    OldReady,
    /// The old backend is terminating and still serving.
    OldServingTerminating,
    /// N1 has no serving endpoint.
    NoLocal,
    /// The new backend is ready.
    NewReady,
}

/// N1's phases as the polls of its EndpointSlices saw them, on the cluster's clock.
///
/// Each poll lists the slices between two stamps: the previous poll's (taken before the list
/// was sent) and its own (taken after the answer). A transition is therefore placed no later
/// than the stamp after the first poll that shows the new phase, and no earlier than the
/// stamp before the last poll that showed the previous one.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Timeline {
    /// Per phase seen: the stamp after the first poll that showed it, and the phase.
    pub(crate) transitions: Vec<(u128, Phase)>,
    /// Per transition: the stamp before the last poll that showed the previous phase.
    pub(crate) seen_before: Vec<u128>,
    /// The newest stamp: taken before the next poll's list.
    pub(super) stamp: u128,
    /// The stamp before the latest poll showing the current phase.
    pub(super) current_from: u128,
}

impl Timeline {
    /// A timeline whose first poll follows the cluster time `start` (`None`: unknown, 0).
    pub(crate) fn new(start: Option<u128>) -> Self {
        let stamp = start.unwrap_or(0);
        Timeline {
            stamp,
            current_from: stamp,
            ..Timeline::default()
        }
    }

    /// How long `phase`, the current one, has surely held (ms): from the stamp after its
    /// first sighting to the stamp before its latest. 0 when it is not the current phase.
    pub(crate) fn held_ms(&self, phase: Phase) -> u128 {
        match self.transitions.last() {
            Some((at, p)) if *p == phase => self.current_from.saturating_sub(*at),
            _ => 0,
        }
    }

    /// One poll that showed `phase`, stamped `after` it (`None`: the stamp could not be
    /// read; the poll is not placed on the clock).
    pub(crate) fn observe(&mut self, phase: Phase, after: Option<u128>) {
        let Some(after) = after else { return };
        let before = self.stamp;
        if self.transitions.last().is_none_or(|(_, last)| *last != phase) {
            self.transitions.push((after, phase));
            self.seen_before.push(self.current_from);
        }
        self.current_from = before;
        self.stamp = self.stamp.max(after);
    }
}

/// The phases the EndpointSlice watch delivered, in order (a phase is recorded when it
/// differs from the one before), and the polls taken meanwhile, each knowing how many of
/// those phases had been delivered when its list was sent. The first phase is the initial
/// list the watch started from.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Watched {
    /// (phase, stamp after the first poll that followed its event; `None` while no poll
    /// has): the event was received before that poll's list was sent, so the phase had
    /// begun by then.
    pub(crate) phases: Vec<(Phase, Option<u128>)>,
    /// Why the watch stopped short of the end of the case (an error, a 410): its phases
    /// may then miss a change, and only the polls are used.
    pub(crate) gap: Option<String>,
    /// The polls, consecutive ones that saw the same phase after the same deliveries as one.
    polls: Vec<Poll>,
    /// The newest stamp: taken before the next poll's list.
    stamp: u128,
    /// The stamp taken after the watch's initial list.
    start: u128,
}

/// Polls that showed `phase` when the watch had delivered its phases up to `delivered`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Poll {
    phase: Phase,
    delivered: usize,
    /// The stamp after the first of them.
    first_after: u128,
    /// The stamp before the last of them.
    last_before: u128,
}

impl Watched {
    /// A watch started from a list that showed `phase`, before the cluster time `start`
    /// (`None`: unknown, 0).
    pub(crate) fn new(phase: Phase, start: Option<u128>) -> Self {
        Watched {
            phases: vec![(phase, None)],
            stamp: start.unwrap_or(0),
            start: start.unwrap_or(0),
            ..Watched::default()
        }
    }

    /// One event applied: the slices now show `phase`.
    pub(crate) fn delivered(&mut self, phase: Phase) {
        if self.phases.last().is_none_or(|(p, _)| *p != phase) {
            self.phases.push((phase, None));
        }
    }

    /// A poll, sent after every phase delivered so far, that showed `phase`, stamped
    /// `after` its list (`None`: the stamp could not be read; the poll is not placed).
    pub(crate) fn polled(&mut self, phase: Phase, after: Option<u128>) {
        let Some(after) = after else { return };
        let before = self.stamp;
        for (_, at) in self.phases.iter_mut().rev() {
            if at.is_some() {
                break;
            }
            *at = Some(after);
        }
        let delivered = self.phases.len() - 1;
        match self.polls.last_mut() {
            Some(p) if p.phase == phase && p.delivered == delivered => p.last_before = before,
            _ => self.polls.push(Poll {
                phase,
                delivered,
                first_after: after,
                last_before: before,
            }),
        }
        self.stamp = self.stamp.max(after);
    }
}

/// The watch's phases placed on the clock by the polls, or `None` when the two cannot be
/// reconciled (the watch has a gap, a poll showed a phase the watch did not deliver in
/// that order, a phase no stamp bounds): the caller then keeps the polls' own timeline,
/// whose skipped phases the judge infers from the rollout's order.
///
/// A poll shows the phase of the watch at or after the last one delivered before it was
/// sent. Phase `j` begins no later than its own stamp and the stamp after the first poll
/// showing it or a later phase, and no earlier than the stamp before the last poll showing
/// an earlier phase.
pub(crate) fn merge(watched: &Watched) -> Option<Timeline> {
    if watched.gap.is_some() || watched.polls.is_empty() {
        return None;
    }
    let phases = &watched.phases;
    // Each poll's place in the watch's sequence, in order.
    let mut index = Vec::with_capacity(watched.polls.len());
    let mut from = 0;
    for poll in &watched.polls {
        let lo = from.max(poll.delivered);
        let j = lo + phases.get(lo..)?.iter().position(|(p, _)| *p == poll.phase)?;
        index.push(j);
        from = j;
    }
    let polls: Vec<(Poll, usize)> = watched.polls.iter().copied().zip(index).collect();
    let n = phases.len();
    let mut upper = Vec::with_capacity(n);
    for (j, (_, own)) in phases.iter().enumerate() {
        let by_poll = polls.iter().find(|(_, i)| *i >= j).map(|(p, _)| p.first_after);
        upper.push(match (*own, by_poll) {
            (Some(a), Some(b)) => a.min(b),
            (a, b) => a.or(b)?,
        });
    }
    for j in (0..n.saturating_sub(1)).rev() {
        upper[j] = upper[j].min(upper[j + 1]);
    }
    let mut timeline = Timeline {
        stamp: watched.stamp,
        current_from: polls.last().map_or(0, |(p, _)| p.last_before),
        ..Timeline::default()
    };
    let mut lower = watched.start;
    for (j, (phase, _)) in phases.iter().enumerate() {
        if let Some((p, _)) = polls.iter().rev().find(|(_, i)| *i < j) {
            lower = lower.max(p.last_before);
        }
        if lower > upper[j] {
            return None;
        }
        timeline.transitions.push((upper[j], *phase));
        timeline.seen_before.push(lower);
    }
    Some(timeline)
}
