//! The integration tests of `locality-apiserver`, one binary (one link) with a module per area.

mod big_lists;
mod clients;
mod common;
mod faults;
mod http_api;
mod kube_proxy;
mod kube_rs;
mod kubectl;
mod live;
mod pods_log;
mod pods_proxy;
mod protobuf_bodies;
mod statefulsets;
mod workload_status;
