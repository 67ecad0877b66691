//! Unit tests of the rollout judge.
use super::*;
use crate::rollout::timeline::{Watched, merge};

const LOCAL: Policy = Policy {
    itp_local: true,
    ipvs: false,
    terminating_fallback: true,
    node_hints: true,
    local_ignored: false,
    tested: None,
};

fn t(ms: u128, seen: Seen) -> Try {
    Try {
        channel: "logs",
        client: "loop".into(),
        target: "10.96.0.1:80".into(),
        protocol: "http",
        sent_ms: ms,
        received_ms: ms,
        seen,
        raw: format!("{ms}"),
    }
}

fn tl(transitions: &[(u128, Phase)], seen_before: &[u128]) -> Timeline {
    Timeline {
        transitions: transitions.to_vec(),
        seen_before: seen_before.to_vec(),
        ..Timeline::default()
    }
}

fn answer(who: &str) -> Seen {
    Seen::Answer {
        responder: who.into(),
    }
}

/// E-a: the old backend answers until 6 s, drops until 9 s, the new one after.
fn correct_e_a() -> Vec<Try> {
    (0..120u128)
        .map(|i| {
            let ms = i * 100;
            let seen = match ms {
                0..6_000 => answer("old"),
                6_000..9_000 => Seen::Timeout,
                _ => answer("new"),
            };
            t(ms, seen)
        })
        .collect()
}

#[test]
fn a_phase_between_two_polls_is_not_judged_a_violation() {
    // The polls saw OldReady until 5 s, then NewReady at 10 s: NoLocal went unseen.
    let transitions = [(0, Phase::OldReady), (10_000, Phase::NewReady)];
    let (s, why, _) = judge_timeline(
        LOCAL,
        &tl(&transitions, &[0, 5_000]),
        &correct_e_a(),
        "old",
        "new",
        1_000,
    );
    assert_eq!(s, Status::Pass, "{why}");
    // Had the polls seen OldReady until 10 s, the drops would be a violation.
    let (s, _, _) = judge_timeline(
        LOCAL,
        &tl(&transitions, &[0, 10_000]),
        &correct_e_a(),
        "old",
        "new",
        1_000,
    );
    assert_eq!(s, Status::Fail);
}

#[test]
fn a_node_that_never_sees_its_endpoint_fails_in_the_settled_phase() {
    let transitions = [
        (0, Phase::OldReady),
        (6_000, Phase::NoLocal),
        (9_000, Phase::NewReady),
    ];
    let tries: Vec<Try> = (0..120u128).map(|i| t(i * 100, Seen::Timeout)).collect();
    let (s, why, _) = judge_timeline(
        LOCAL,
        &tl(&transitions, &[0, 5_900, 8_900]),
        &tries,
        "old",
        "new",
        1_000,
    );
    assert_eq!(s, Status::Fail, "{why}");
}

#[test]
fn a_late_kube_proxy_is_incomplete_with_its_lag() {
    // Every phase shows 4 s late; the band is 1 s.
    let transitions = [
        (0, Phase::OldReady),
        (6_000, Phase::NoLocal),
        (9_000, Phase::NewReady),
    ];
    let tries: Vec<Try> = (0..200u128)
        .map(|i| {
            let ms = i * 100;
            let seen = match ms {
                0..10_000 => answer("old"),
                10_000..13_000 => Seen::Timeout,
                _ => answer("new"),
            };
            t(ms, seen)
        })
        .collect();
    let (s, why, measured) = judge_timeline(
        LOCAL,
        &tl(&transitions, &[0, 5_900, 8_900]),
        &tries,
        "old",
        "new",
        1_000,
    );
    assert_eq!(s, Status::Incomplete, "{why}");
    assert!(measured >= 4_000, "{measured}");
    // A remote answer under a Local policy is a violation whatever the lag.
    let mut remote = tries.clone();
    remote[150].seen = answer("remote");
    let (s, _, _) = judge_timeline(
        LOCAL,
        &tl(&transitions, &[0, 5_900, 8_900]),
        &remote,
        "old",
        "new",
        1_000,
    );
    assert_eq!(s, Status::Fail);
}

#[test]
fn ipvs_refuses_where_iptables_drops_in_the_no_local_phase() {
    let transitions = [
        (0, Phase::OldReady),
        (6_000, Phase::NoLocal),
        (9_000, Phase::NewReady),
    ];
    let mut tries = correct_e_a();
    for t in tries.iter_mut().filter(|t| t.seen == Seen::Timeout) {
        t.seen = Seen::Refused;
    }
    let ipvs = Policy {
        itp_local: true,
        ipvs: true,
        terminating_fallback: true,
        node_hints: true,
        local_ignored: false,
        tested: None,
    };
    let (s, why, _) = judge_timeline(
        ipvs,
        &tl(&transitions, &[0, 5_900, 8_900]),
        &tries,
        "old",
        "new",
        1_000,
    );
    assert_eq!(s, Status::Pass, "{why}");
    let (s, _, _) = judge_timeline(
        LOCAL,
        &tl(&transitions, &[0, 5_900, 8_900]),
        &tries,
        "old",
        "new",
        1_000,
    );
    assert_eq!(s, Status::Fail);
}

#[test]
fn a_stall_between_a_list_and_its_stamp_does_not_stretch_the_phase_it_showed() {
    // The old backend answers until 6 s, N1 has no endpoint until 10 s, the new backend
    // answers from 10 s. The fourth poll lists the slices at 9.5 s (NoLocal) but its stamp
    // is read only at 20 s (the tool stalled in between); the fifth shows NewReady.
    let mut timeline = Timeline::new(Some(0));
    for (phase, after) in [
        (Phase::OldReady, 1_000),
        (Phase::OldReady, 5_000),
        (Phase::NoLocal, 7_000),
        (Phase::NoLocal, 20_000),
        (Phase::NewReady, 21_000),
    ] {
        timeline.observe(phase, Some(after));
    }
    // NewReady began after the list that came after the 7 s stamp.
    assert_eq!(timeline.seen_before.last(), Some(&7_000));
    let tries: Vec<Try> = (0..250u128)
        .map(|i| {
            let ms = i * 100;
            let seen = match ms {
                0..6_000 => answer("old"),
                6_000..10_000 => Seen::Timeout,
                _ => answer("new"),
            };
            t(ms, seen)
        })
        .collect();
    let (s, why, _) = judge_timeline(LOCAL, &timeline, &tries, "old", "new", 1_000);
    assert_ne!(s, Status::Fail, "{why}");
    // A poll whose stamp could not be read is not placed on the clock.
    let mut unstamped = Timeline::new(Some(0));
    unstamped.observe(Phase::OldReady, Some(1_000));
    unstamped.observe(Phase::NoLocal, None);
    assert_eq!(unstamped.transitions, vec![(1_000, Phase::OldReady)]);
}

#[test]
fn the_phase_under_test_must_be_seen_settled() {
    // E-a: old answers until 5 s, serving-terminating until 25 s (old still answers),
    // no local endpoint until 28 s, the new backend after. Polls every 500 ms.
    let e_a = Policy {
        tested: Some(Phase::OldServingTerminating),
        ..LOCAL
    };
    let phase = |ms: u128| match ms {
        0..5_000 => Phase::OldReady,
        5_000..25_000 => Phase::OldServingTerminating,
        25_000..28_000 => Phase::NoLocal,
        _ => Phase::NewReady,
    };
    let timeline = |poll: u128| {
        let mut tl = Timeline::new(Some(0));
        for k in 1..(40_000 / poll) {
            tl.observe(phase(k * poll - poll / 2), Some(k * poll));
        }
        tl
    };
    let tries = |fallback: bool| -> Vec<Try> {
        (0..400u128)
            .map(|i| {
                let ms = i * 100;
                let seen = match phase(ms) {
                    Phase::OldReady => answer("old"),
                    Phase::OldServingTerminating if fallback => answer("old"),
                    Phase::OldServingTerminating | Phase::NoLocal => Seen::Timeout,
                    Phase::NewReady => answer("new"),
                };
                t(ms, seen)
            })
            .collect()
    };
    let (s, why, _) = judge_timeline(e_a, &timeline(500), &tries(true), "old", "new", 5_000);
    assert_eq!(s, Status::Pass, "{why}");
    // A data plane without the fallback drops while the old pod still serves.
    let (s, why, _) = judge_timeline(e_a, &timeline(500), &tries(false), "old", "new", 5_000);
    assert_eq!(s, Status::Fail, "{why}");
    // Polls too slow to see the phase settled: not judged, never a PASS.
    let (s, why, _) = judge_timeline(e_a, &timeline(8_000), &tries(true), "old", "new", 5_000);
    assert_eq!(s, Status::Incomplete, "{why}");
    assert!(why.contains("OldServingTerminating"), "{why}");
}

#[test]
fn the_old_pod_going_before_its_slice_says_so_is_not_a_violation() {
    // ipvs, E-a: the tool deletes the old pod with grace 0 at 20 s; ipvs still points at
    // its address until the slices show NoLocal at 20.6 s: a few timeouts, then refusals.
    let ipvs = Policy {
        itp_local: true,
        ipvs: true,
        terminating_fallback: true,
        node_hints: true,
        local_ignored: false,
        tested: Some(Phase::OldServingTerminating),
    };
    let mut tl = Timeline::new(Some(0));
    for k in 1..60u128 {
        let at = k * 500;
        let phase = match at - 250 {
            0..5_000 => Phase::OldReady,
            5_000..20_600 => Phase::OldServingTerminating,
            20_600..25_000 => Phase::NoLocal,
            _ => Phase::NewReady,
        };
        tl.observe(phase, Some(at));
    }
    let tries: Vec<Try> = (0..290u128)
        .map(|i| {
            let ms = i * 100;
            let seen = match ms {
                0..20_000 => answer("old"),
                20_000..20_500 => Seen::Timeout,
                20_500..25_000 => Seen::Refused,
                _ => answer("new"),
            };
            t(ms, seen)
        })
        .collect();
    let (s, why, _) = judge_timeline(ipvs, &tl, &tries, "old", "new", 1_000);
    assert_eq!(s, Status::Pass, "{why}");
    // Timeouts well inside the serving-terminating phase stay violations.
    let mut early = tries.clone();
    for t in early.iter_mut().filter(|t| (10_000..12_000).contains(&t.sent_ms)) {
        t.seen = Seen::Timeout;
    }
    let (s, why, _) = judge_timeline(ipvs, &tl, &early, "old", "new", 1_000);
    assert_eq!(s, Status::Fail, "{why}");
}

/// Polls every second from 1 s to 12 s (each stamped at its second); `events[k]` are the
/// phases the watch delivers just before the poll at `k` s; `shown(k)` what that poll's
/// list shows. Returns the polls' and the watch's observations.
fn observed(first: Phase, events: &[(u128, Phase)], shown: impl Fn(u128) -> Phase) -> (Timeline, Watched) {
    let mut polls = Timeline::new(Some(0));
    let mut watched = Watched::new(first, Some(0));
    for k in 1..=12u128 {
        for (_, p) in events.iter().filter(|(at, _)| *at == k) {
            watched.delivered(*p);
        }
        let p = shown(k);
        polls.observe(p, Some(k * 1_000));
        watched.polled(p, Some(k * 1_000));
    }
    (polls, watched)
}

/// E-a's old backend flaps: not ready from 4.0 s to 4.5 s (the watch delivers both changes
/// before the poll at 5 s, which shows it ready again), then the rollout as usual.
fn flapping_tries() -> Vec<Try> {
    (0..120u128)
        .map(|i| {
            let ms = i * 100;
            t(
                ms,
                if (4_000..4_500).contains(&ms) {
                    Seen::Timeout
                } else {
                    answer("old")
                },
            )
        })
        .collect()
}

#[test]
fn a_readiness_flap_between_two_polls_is_on_the_watched_timeline() {
    let events = [(5, Phase::NoLocal), (5, Phase::OldReady)];
    let (polls, watched) = observed(Phase::OldReady, &events, |_| Phase::OldReady);
    // The polls alone never saw the flap: the drops look like a violation of OldReady.
    let (s, _, _) = judge_timeline(LOCAL, &polls, &flapping_tries(), "old", "new", 300);
    assert_eq!(s, Status::Fail);
    // The watch saw it, between the polls at 4 s and 5 s.
    let merged = merge(&watched).expect("the watch and the polls agree");
    assert_eq!(
        merged.transitions,
        [
            (1_000, Phase::OldReady),
            (5_000, Phase::NoLocal),
            (5_000, Phase::OldReady)
        ]
    );
    assert_eq!(merged.seen_before, [0, 3_000, 3_000]);
    let (s, why, _) = judge_timeline(LOCAL, &merged, &flapping_tries(), "old", "new", 300);
    assert_eq!(s, Status::Pass, "{why}");
}

#[test]
fn a_watch_behind_the_polls_is_placed_by_them() {
    // The poll at 3 s already shows OldServingTerminating; the watch delivers it before the
    // poll at 4 s.
    let events = [(4, Phase::OldServingTerminating)];
    let (polls, watched) = observed(Phase::OldReady, &events, |k| {
        if k >= 3 {
            Phase::OldServingTerminating
        } else {
            Phase::OldReady
        }
    });
    let merged = merge(&watched).expect("the watch and the polls agree");
    assert_eq!(merged.transitions, polls.transitions);
    assert_eq!(merged.seen_before, polls.seen_before);
}

#[test]
fn a_watch_that_disagrees_with_the_polls_or_has_a_gap_is_not_used() {
    // A poll shows NewReady, which the watch never delivers.
    let (_, watched) = observed(Phase::OldReady, &[], |k| {
        if k >= 6 { Phase::NewReady } else { Phase::OldReady }
    });
    assert_eq!(merge(&watched), None);
    // A gap: the watch's phases may miss a change.
    let (_, mut watched) = observed(Phase::OldReady, &[], |_| Phase::OldReady);
    assert!(merge(&watched).is_some());
    watched.gap = Some("410 Gone".into());
    assert_eq!(merge(&watched), None);
}
