//! The slices of one Service and address type as the hint heuristics see them.
//!
//! Mirrors `k8s.io/endpointslice` `topologycache/sliceinfo.go` `SliceInfo`.

use crate::objects::{Endpoint, EndpointSlice};

/// Slices of one Service and address type, split the way the reconciler hands them to the hint
/// heuristics: to create, to update, and unchanged (observed slices that need no write).
///
/// The heuristics move an unchanged slice to `to_update` (appended) when its hints must change.
/// Mirrors `topologycache/sliceinfo.go` `SliceInfo`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SliceInfo {
    /// Slices the controller would create.
    pub to_create: Vec<EndpointSlice>,
    /// Slices the controller would update.
    pub to_update: Vec<EndpointSlice>,
    /// Slices left as they are.
    pub unchanged: Vec<EndpointSlice>,
}

impl SliceInfo {
    /// Number of endpoints with `ready == Some(true)` over all three lists.
    ///
    /// Mirrors `sliceinfo.go` `getTotalReadyEndpoints` (`ready == nil` counts as not ready).
    pub fn total_ready_endpoints(&self) -> usize {
        self.all()
            .map(|s| s.endpoints.iter().filter(|e| endpoint_ready(e)).count())
            .sum()
    }

    /// All slices: `to_create`, then `to_update`, then `unchanged`.
    pub fn all(&self) -> impl Iterator<Item = &EndpointSlice> {
        self.to_create
            .iter()
            .chain(&self.to_update)
            .chain(&self.unchanged)
    }

    /// Consumes the info into one list: `to_create`, then `to_update`, then `unchanged`.
    pub fn into_slices(self) -> Vec<EndpointSlice> {
        let mut out = self.to_create;
        out.extend(self.to_update);
        out.extend(self.unchanged);
        out
    }
}

/// The controller's notion of a ready endpoint: `conditions.ready == Some(true)`.
///
/// Mirrors `topologycache/utils.go` `EndpointReady` and `trafficdist.go` `endpointReady`
/// (kube-proxy, by contrast, reads an unset `ready` as true).
pub fn endpoint_ready(endpoint: &Endpoint) -> bool {
    endpoint.conditions.ready == Some(true)
}
