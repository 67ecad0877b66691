//! Fault injection for tests: 5xx answers per verb, 409 on create, added latency and dropped
//! connections, drawn from a seeded generator (the same seed and request order give the same
//! faults). Forced watch expiry is [`crate::Running::expire_watches_before`].

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::Duration;

use http::Method;

/// A Kubernetes API verb, as faults are configured per verb.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Verb {
    /// GET of one object.
    Get,
    /// GET of a collection.
    List,
    /// GET of a collection with `watch=true` (the fault answers before the stream starts).
    Watch,
    /// POST.
    Create,
    /// PUT.
    Update,
    /// PATCH.
    Patch,
    /// DELETE.
    Delete,
    /// Any request to `pods/NAME/proxy/…`.
    Proxy,
}

impl Verb {
    /// The verb's Kubernetes name (`get`, `list`…, `proxy`).
    pub fn as_str(self) -> &'static str {
        match self {
            Verb::Get => "get",
            Verb::List => "list",
            Verb::Watch => "watch",
            Verb::Create => "create",
            Verb::Update => "update",
            Verb::Patch => "patch",
            Verb::Delete => "delete",
            Verb::Proxy => "proxy",
        }
    }
}

/// What to inject. The default injects nothing. Rates are probabilities in `[0, 1]`, drawn per
/// request. Only resource requests (`/api/v1/…`, `/apis/G/V/…`) get 5xx answers, 409s and
/// dropped connections; discovery, OpenAPI and `/version` are never failed (so kubectl and
/// kube-rs can always start). Latency applies to every request.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Faults {
    /// Seed of the fault generator.
    pub seed: u64,
    /// Per verb: the fraction of requests answered with [`Faults::error_code`] instead.
    pub error_rate: BTreeMap<Verb, f64>,
    /// The 5xx code answered (default 0 means 500 `InternalError`; 503 is `ServiceUnavailable`,
    /// 502/504 are answered with their own reasons). The body is a `metav1.Status` whose
    /// message says the fault is simulated.
    pub error_code: u16,
    /// The message of the injected 5xx `Status` instead of the one saying it is simulated:
    /// for tests of how a client carries a hostile server's text (huge, control characters,
    /// markup). `None`: "Internal error occurred: injected fault: …".
    pub error_message: Option<String>,
    /// The first this many resource requests (any verb) are answered with the 5xx, whatever
    /// the rates: a deterministic burst to test client retries.
    pub fail_first: u64,
    /// Fraction of creates answered `409 Conflict` (`Operation cannot be fulfilled on …`).
    pub conflict_on_create: f64,
    /// Wall-clock delay added to every request: half before it is handled, half before its
    /// answer leaves (what the client reads is already that old).
    pub latency: Duration,
    /// Fraction of resource requests whose connection is closed without any answer.
    pub drop_rate: f64,
    /// Every this often (wall clock), open watches are closed and a watch from an older
    /// resourceVersion than the store's at that moment gets `410 Gone`, as after an etcd
    /// compaction: clients must re-list (`sim serve --expire-watches`).
    pub expire_watches: Option<Duration>,
}

impl Faults {
    /// Sets the 5xx rate for `verb` (builder style).
    pub fn with_error_rate(mut self, verb: Verb, rate: f64) -> Self {
        self.error_rate.insert(verb, rate);
        self
    }

    pub(crate) fn validate(&self) -> Result<(), String> {
        let rates = self
            .error_rate
            .iter()
            .map(|(v, r)| (format!("5xx rate for {}", v.as_str()), *r))
            .chain([
                ("409 rate on create".to_string(), self.conflict_on_create),
                ("drop rate".to_string(), self.drop_rate),
            ]);
        for (what, r) in rates {
            if !(r.is_finite() && (0.0..=1.0).contains(&r)) {
                return Err(format!("fault injection: {what} must be within [0, 1], not {r}"));
            }
        }
        if self.error_code != 0 && !(500..=599).contains(&self.error_code) {
            return Err(format!(
                "fault injection: error code must be a 5xx, not {}",
                self.error_code
            ));
        }
        Ok(())
    }

    pub(crate) fn code_and_reason(&self) -> (u16, &'static str) {
        match self.error_code {
            0 | 500 => (500, "InternalError"),
            503 => (503, "ServiceUnavailable"),
            504 => (504, "Timeout"),
            c => (c, "InternalError"),
        }
    }
}

/// How many faults were injected, per kind (see [`crate::Running::faults_injected`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FaultCounts {
    /// 5xx answers per verb.
    pub errors: BTreeMap<Verb, u64>,
    /// 409 answers to creates.
    pub conflicts: u64,
    /// Connections closed without an answer.
    pub dropped: u64,
    /// Resource requests seen per verb (faulted or not).
    pub requests: BTreeMap<Verb, u64>,
}

/// The fault generator and its counts.
pub(crate) struct Injector {
    pub(crate) faults: Faults,
    state: Mutex<(u64, FaultCounts)>,
}

/// What to do with one request.
pub(crate) enum Decision {
    Serve,
    Drop,
    Error,
    Conflict,
}

fn splitmix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

impl Injector {
    pub(crate) fn new(faults: Faults) -> Self {
        Injector {
            faults,
            state: Mutex::new((0, FaultCounts::default())),
        }
    }

    pub(crate) fn counts(&self) -> FaultCounts {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .1
            .clone()
    }

    /// Decides the fate of a request with `verb` (three draws per request, always, so the
    /// sequence does not depend on which rates are set).
    pub(crate) fn decide(&self, verb: Verb) -> Decision {
        let mut st = self
            .state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut draw = || {
            st.0 += 1;
            (splitmix(self.faults.seed ^ splitmix(st.0)) >> 11) as f64 / (1u64 << 53) as f64
        };
        let (d_drop, d_err, d_conflict) = (draw(), draw(), draw());
        let seq = st.0 / 3;
        let counts = &mut st.1;
        *counts.requests.entry(verb).or_default() += 1;
        if d_drop < self.faults.drop_rate {
            counts.dropped += 1;
            return Decision::Drop;
        }
        if seq <= self.faults.fail_first || d_err < self.faults.error_rate.get(&verb).copied().unwrap_or(0.0)
        {
            *counts.errors.entry(verb).or_default() += 1;
            return Decision::Error;
        }
        if verb == Verb::Create && d_conflict < self.faults.conflict_on_create {
            counts.conflicts += 1;
            return Decision::Conflict;
        }
        Decision::Serve
    }
}

/// The verb of a resource request (`segs`: the path's segments), or `None` for discovery,
/// OpenAPI and other non-resource paths.
pub(crate) fn classify(method: &Method, segs: &[&str], watch: bool) -> Option<Verb> {
    let rest = match segs {
        ["api", _, rest @ ..] | ["apis", _, _, rest @ ..] => rest,
        _ => return None,
    };
    let rest = match rest {
        ["namespaces", _, tail @ ..] if !tail.is_empty() => tail,
        _ => rest,
    };
    let named = match rest {
        [] => return None,
        [_] => false,
        [_, _, "proxy", ..] => return Some(Verb::Proxy),
        _ => true,
    };
    Some(match (method.as_str(), named) {
        ("GET", false) if watch => Verb::Watch,
        ("GET", false) => Verb::List,
        ("GET", true) => Verb::Get,
        ("POST", _) => Verb::Create,
        ("PUT", _) => Verb::Update,
        ("PATCH", _) => Verb::Patch,
        ("DELETE", _) => Verb::Delete,
        _ => return None,
    })
}
