//! The simulated cluster as the model reads a real one: a [`ClusterState`] snapshot of the
//! store (what `kubectl get -o json` of every kind would return at this virtual instant).

use locality_model::objects::ClusterState;

use crate::engine::Engine;
use crate::objects::{Kind, Object};

impl Engine {
    /// The objects of the simulated store at this virtual instant, as the model's
    /// [`ClusterState`]: Nodes, Pods, Services, EndpointSlices, workloads and Namespaces.
    pub fn cluster_state(&self) -> ClusterState {
        let mut state = ClusterState::default();
        for kind in [
            Kind::Namespace,
            Kind::Node,
            Kind::Pod,
            Kind::Service,
            Kind::EndpointSlice,
            Kind::Deployment,
            Kind::ReplicaSet,
            Kind::DaemonSet,
            Kind::StatefulSet,
        ] {
            for (_, stored) in self.store().list(kind) {
                match &*stored.object {
                    Object::Namespace(n) => state.namespaces.push(n.clone()),
                    Object::Node(n) => state.nodes.push(n.clone()),
                    Object::Pod(p) => state.pods.push(p.pod.clone()),
                    Object::Service(s) => state.services.push(s.clone()),
                    Object::EndpointSlice(s) => state.endpoint_slices.push(s.clone()),
                    Object::Workload(w) => state.workloads.push(w.workload.clone()),
                    // Nothing the model reads.
                    Object::Stored(_) => {}
                }
            }
        }
        state
    }
}
