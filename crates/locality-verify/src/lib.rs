//! `locality-verify`: the acceptance playbook (docs/design.md §5–§6), automated.
//!
//! It talks only the Kubernetes API (kube-rs), so the simulated cluster served by
//! `locality sim serve` and a real cluster run the same code. A run:
//! 1. picks node roles (`N1`, `N2` with backends, `N3` without, `N1z` beside `N1`) among
//!    Ready, untainted nodes (`roles`);
//! 2. creates one labelled namespace, client pods pinned to the role nodes and, per case, its
//!    own Service and backends pinned with `matchFields: metadata.name` affinity
//!    ([`fixture`], [`cluster`]);
//! 3. reads the state back and asks the model what each case must observe (`expect`);
//! 4. probes through the API server's `pods/proxy` to the clients' agnhost `netexec /dial`,
//!    one try per call (`probe`), and judges the tries against the expectation (`judge`);
//!    Rollout cases (`E-a`, `E-b`, `H3`) probe continuously over the `logs` channel instead
//!    (probe-loop pods read through `pods/log`, [`logs`]) and are judged per phase of the
//!    rollout (`rollout`); `M` reads N3's kube-proxy metrics with one-shot hostNetwork curl
//!    pods ([`metrics`]);
//! 5. decides ACCEPT / REPAIR / RERUN / HOLD (`decision`) and writes the evidence ledger
//!    (`ledger`, with the self-contained `report.html` of `html`); the namespace is
//!    deleted at the end, on failure and on interruption.

pub mod cases;
mod clock;
pub mod cluster;
mod decision;
mod diagnose;
mod divergence;
mod each_node;
mod env;
mod error;
mod expect;
pub mod fixture;
mod html;
mod judge;
mod known_planes;
mod lag;
mod ledger;
pub mod logs;
pub mod metrics;
mod options;
mod plan;
mod probe;
mod probing;
mod quote;
mod record;
mod repeat;
mod restarts;
mod retry;
mod roles;
mod rollout;
mod run;
mod run_id;
mod scrape;
mod setup;
mod source_ip;
mod survey;

pub use cases::{CATALOGUE, CaseId};
pub use clock::{ClusterClock, Deadline};
pub use decision::{Decision, Lag, Repair, RepairKind, Sampled};
pub use expect::Expected;
pub use judge::Status;
pub use ledger::declared_text;
pub use probe::{Seen, Try};
pub use record::{Hypothesis, LagOverLimit, NodeDataPlane, NodeJudgement, Transition};
pub use roles::Roles;
pub use run::{
    CUT_SHORT, CaseRecord, DEFAULT_MAX_NODES, INTERRUPTED, VerifyError, VerifyOptions, VerifyOutcome,
    describe, dry_run, new_run_id, verify, verify_until, verify_watching,
};
