//! kube-proxy model.
