//! LOC021: a Service whose policy meets a known divergence of the detected data plane and
//! version (the catalogue, `locality_model::dataplane::catalogue`, docs/dataplanes.md). The
//! evidence is the catalogue entry (its ID and upstream issue) and the object detection read
//! (the data plane's DaemonSet).

use locality_model::objects::{Service, WorkloadKind};

use crate::builder::{object, svc_name};
use crate::context::Ctx;
use crate::finding::ObjectRef;
use crate::rule::RuleId;

/// Runs LOC021 on one Service.
pub(crate) fn check(ctx: &mut Ctx<'_, '_>, svc: &Service) {
    let entries: Vec<_> = ctx
        .divergences
        .iter()
        .copied()
        .filter(|e| e.effect.applies_to(svc))
        .collect();
    for e in entries {
        let d = &ctx.detection;
        let msg = format!(
            "{} runs on {} ({}): known divergence {} ({}): {} [{}]",
            svc_name(svc),
            d.describe(),
            d.source,
            e.id,
            e.issues.join(", "),
            e.divergence,
            e.issue_url()
        );
        let mut b = ctx.finding(RuleId::Loc021, svc).message(msg).fix(e.advice());
        if let Some(obj) = daemonset_ref(ctx, &d.source) {
            b.f.objects.push(obj);
        }
        ctx.push(b);
    }
}

/// The DaemonSet named in a detection's source (`DaemonSet NS/NAME image …`), with where
/// the input has it.
fn daemonset_ref(ctx: &Ctx<'_, '_>, source: &str) -> Option<ObjectRef> {
    let rest = source.strip_prefix("DaemonSet ")?;
    let (ns, rest) = rest.split_once('/')?;
    let name = rest.split_whitespace().next()?;
    let found = ctx
        .state
        .workloads
        .iter()
        .find(|w| w.kind == WorkloadKind::DaemonSet && w.meta.namespace == ns && w.meta.name == name);
    Some(match found {
        Some(w) => object("DaemonSet", &w.meta),
        None => ObjectRef {
            kind: "DaemonSet".into(),
            namespace: ns.into(),
            name: name.into(),
            origin: None,
        },
    })
}
