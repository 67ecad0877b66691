//! A case's tries drawn as an inline SVG timeline: one row per outcome, coloured by whether
//! the case's expectation allows it, the tries of one row binned per 2-px column.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::escape;
use crate::probe::{Seen, Try};
use crate::record::CaseRecord;

/// A try's outcome as the timeline draws it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Lane {
    Answer(String),
    Timeout,
    Refused,
    Other,
    Incomplete,
}

impl Lane {
    fn of(t: &Try) -> Lane {
        match &t.seen {
            Seen::Answer { responder } => Lane::Answer(responder.clone()),
            Seen::Timeout => Lane::Timeout,
            Seen::Refused => Lane::Refused,
            Seen::Other => Lane::Other,
            Seen::Incomplete => Lane::Incomplete,
        }
    }

    fn label(&self) -> String {
        match self {
            Lane::Answer(pod) => format!("answer: {pod}"),
            Lane::Timeout => "timeout".into(),
            Lane::Refused => "refused".into(),
            Lane::Other => "other error".into(),
            Lane::Incomplete => "incomplete".into(),
        }
    }
}

/// Colours of responders, in the order of their names.
const ANSWER_COLOURS: [&str; 8] = [
    "#2ca02c", "#1f77b4", "#17becf", "#bcbd22", "#9467bd", "#e377c2", "#8c564b", "#7f7f7f",
];

/// Outcomes the case's expectation allows: greens and blues.
const ALLOWED_COLOURS: [&str; 4] = ["#2ca02c", "#1f77b4", "#17becf", "#98df8a"];
/// Outcomes it forbids: reds and oranges.
const FORBIDDEN_COLOURS: [&str; 4] = ["#d62728", "#ff7f0e", "#8c1d1d", "#e7969c"];

fn colour(lane: &Lane, answer_index: usize) -> &'static str {
    match lane {
        Lane::Answer(_) => ANSWER_COLOURS[answer_index % ANSWER_COLOURS.len()],
        Lane::Timeout => "#d62728",
        Lane::Refused => "#ff7f0e",
        Lane::Other => "#6b3e26",
        Lane::Incomplete => "#c7c7c7",
    }
}

/// Whether `expected` allows what `lane` shows (`None`: it does not say, e.g. a rollout,
/// judged per phase). Per-node expectations allow what any node's allows.
fn allowed(expected: Option<&crate::expect::Expected>, lane: &Lane) -> Option<bool> {
    use crate::expect::Expected;
    match (expected?, lane) {
        (_, Lane::Incomplete) => None,
        (Expected::Deliver { pods }, Lane::Answer(p)) => Some(pods.contains(p)),
        (Expected::Drop, Lane::Timeout) | (Expected::Reject, Lane::Refused) => Some(true),
        (Expected::Deliver { .. } | Expected::Drop | Expected::Reject, _) => Some(false),
        (Expected::PerNode { nodes }, lane) => {
            let each: Vec<Option<bool>> = nodes.values().map(|e| allowed(Some(e), lane)).collect();
            if each.contains(&Some(true)) {
                Some(true)
            } else if each.iter().all(|a| *a == Some(false)) && !each.is_empty() {
                Some(false)
            } else {
                None
            }
        }
        (Expected::Unknown { .. }, _) => None,
    }
}

/// Shortens a lane label for the SVG's left margin (the full text is in its tooltip).
fn short(label: &str) -> String {
    const MAX: usize = 30;
    if label.chars().count() <= MAX {
        label.to_string()
    } else {
        let mut s: String = label.chars().take(MAX - 1).collect();
        s.push('…');
        s
    }
}

/// The width of a timeline's column (px): the tries of one lane in it are one mark.
const BIN_PX: f64 = 2.0;

/// The tries of one lane in one column of a timeline.
struct Bin {
    /// The first try's index.
    first: usize,
    count: usize,
    /// The mark's left and right edges (px).
    from: f64,
    to: f64,
}

/// One case's tries as an inline SVG (one row per outcome, x = send time since the case's
/// first try) with a legend.
pub(super) fn timeline(c: &CaseRecord) -> String {
    const LEFT: f64 = 220.0;
    const PLOT: f64 = 640.0;
    const ROW: f64 = 18.0;
    const TOP: f64 = 6.0;
    let t0 = c.tries.iter().map(|t| t.sent_ms).min().unwrap_or(0);
    let end = c
        .tries
        .iter()
        .map(|t| t.received_ms.max(t.sent_ms))
        .max()
        .unwrap_or(t0);
    let span = (end - t0).max(1) as f64;
    let x = |ms: u128| LEFT + (ms.saturating_sub(t0)) as f64 / span * PLOT;

    let mut lanes: BTreeMap<Lane, usize> = BTreeMap::new();
    for t in &c.tries {
        *lanes.entry(Lane::of(t)).or_default() += 1;
    }
    let rows: Vec<&Lane> = lanes.keys().collect();
    // As expected: greens and blues; not: reds. Without an expectation, one colour per outcome.
    let mut colours: BTreeMap<&Lane, &'static str> = BTreeMap::new();
    let (mut answers, mut ok, mut wrong) = (0, 0, 0);
    for lane in &rows {
        let c = match allowed(c.expected.as_ref(), lane) {
            Some(true) => {
                ok += 1;
                ALLOWED_COLOURS[(ok - 1) % ALLOWED_COLOURS.len()]
            }
            Some(false) => {
                wrong += 1;
                FORBIDDEN_COLOURS[(wrong - 1) % FORBIDDEN_COLOURS.len()]
            }
            None => colour(lane, answers),
        };
        colours.insert(lane, c);
        if matches!(lane, Lane::Answer(_)) {
            answers += 1;
        }
    }
    let height = TOP + rows.len() as f64 * ROW + 28.0;
    let width = LEFT + PLOT + 20.0;
    let id = escape(&c.id);
    let mut s = String::new();
    let _ = writeln!(
        s,
        "<svg width=\"{width}\" height=\"{height}\" \
         viewBox=\"0 0 {width} {height}\" role=\"img\" aria-label=\"tries of case {id}\" \
         font-family=\"sans-serif\" font-size=\"11\">"
    );
    for (i, lane) in rows.iter().enumerate() {
        let y = TOP + i as f64 * ROW;
        let label = lane.label();
        let _ = writeln!(
            s,
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\"><title>{}</title>{}</text>\
             <line x1=\"{LEFT}\" y1=\"{:.1}\" x2=\"{:.1}\" y2=\"{:.1}\" stroke=\"#eee\"/>",
            LEFT - 6.0,
            y + 12.0,
            escape(&label),
            escape(&short(&label)),
            y + ROW / 2.0,
            LEFT + PLOT,
            y + ROW / 2.0,
        );
    }
    // One mark per lane and BIN_PX-wide column of the plot (a rollout has thousands of
    // tries): the mark spans its tries, its tooltip counts them and quotes the first.
    let mut bins: BTreeMap<(usize, u64), Bin> = BTreeMap::new();
    for (n, t) in c.tries.iter().enumerate() {
        let lane = Lane::of(t);
        let row = rows.iter().position(|l| **l == lane).unwrap_or(0);
        let column = ((x(t.sent_ms) - LEFT) / BIN_PX).floor().max(0.0) as u64;
        let b = bins.entry((row, column)).or_insert_with(|| Bin {
            first: n,
            count: 0,
            from: x(t.sent_ms),
            to: 0.0,
        });
        b.count += 1;
        b.to = b.to.max(x(t.received_ms.max(t.sent_ms)));
    }
    for ((row, _), b) in &bins {
        let t = &c.tries[b.first];
        let lane = Lane::of(t);
        let y = TOP + *row as f64 * ROW + 4.0;
        let w = (b.to - b.from).max(2.0);
        let fill = colours.get(&lane).copied().unwrap_or("#000");
        let mut tip = format!(
            "{}: +{} ms, {} → {} ({}), {} in {} ms",
            if b.count == 1 {
                format!("try {}", b.first + 1)
            } else {
                format!("{} tries from try {}", b.count, b.first + 1)
            },
            t.sent_ms.saturating_sub(t0),
            t.client,
            t.target,
            t.protocol,
            lane.label(),
            t.received_ms.saturating_sub(t.sent_ms)
        );
        if !matches!(t.seen, Seen::Answer { .. }) && !t.raw.is_empty() {
            let _ = write!(tip, ": {}", t.raw);
        }
        let _ = writeln!(
            s,
            "<rect x=\"{:.1}\" y=\"{y:.1}\" width=\"{w:.1}\" height=\"10\" fill=\"{fill}\" \
             fill-opacity=\"0.8\"><title>{}</title></rect>",
            b.from,
            escape(&tip)
        );
    }
    let axis = TOP + rows.len() as f64 * ROW + 4.0;
    // Rollout cases: where N1's endpoints changed phase, as the slices showed it.
    for tr in c.transitions.iter().filter(|tr| (t0..=end).contains(&tr.at_ms)) {
        let tx = x(tr.at_ms);
        let _ = writeln!(
            s,
            "<line class=\"transition\" x1=\"{tx:.1}\" y1=\"{TOP}\" x2=\"{tx:.1}\" y2=\"{axis:.1}\" \
             stroke=\"#555\" stroke-dasharray=\"3,3\"><title>{}: +{} ms</title></line>\
             <text x=\"{:.1}\" y=\"{:.1}\" font-size=\"9\" fill=\"#555\">{}</text>",
            escape(&tr.phase),
            tr.at_ms.saturating_sub(t0),
            tx + 2.0,
            axis - 2.0,
            escape(&tr.phase)
        );
    }
    let _ = writeln!(
        s,
        "<line x1=\"{LEFT}\" y1=\"{axis:.1}\" x2=\"{:.1}\" y2=\"{axis:.1}\" stroke=\"#444\"/>\
         <text x=\"{LEFT}\" y=\"{:.1}\">0 s</text>\
         <text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{:.2} s</text>",
        LEFT + PLOT,
        axis + 14.0,
        LEFT + PLOT,
        axis + 14.0,
        (end - t0) as f64 / 1000.0
    );
    s.push_str("</svg>\n<p class=\"legend\">");
    for (lane, count) in &lanes {
        let _ = write!(
            s,
            "<span><i style=\"background:{}\"></i>{} ({count}){}</span>",
            colours.get(lane).copied().unwrap_or("#000"),
            escape(&lane.label()),
            match allowed(c.expected.as_ref(), lane) {
                Some(true) => ", as expected",
                Some(false) => ", not expected",
                None => "",
            }
        );
    }
    s.push_str("</p>\n");
    s
}
