//! The integration tests of `locality-model`, one binary (one link) with a module per area.

mod dataplanes_doc;
mod endpointslice_common;
mod endpointslice_conditions;
mod endpointslice_feature_gates;
mod endpointslice_props;
mod endpointslice_reconciler;
mod endpointslice_topologycache;
mod endpointslice_trafficdist;
mod kube_proxy_categorize;
mod kube_proxy_packet_flows;
mod properties;
mod support;
