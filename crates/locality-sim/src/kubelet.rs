//! The simulated kubelet: pod IPs from per-node CIDRs, container start, readiness probes by
//! declared parameters, and graceful termination (SIGTERM, shutdown delay, grace period).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use locality_model::objects::{PodPhase, Protocol};

use crate::engine::Engine;
use crate::objects::{Object, ObjectKey, ProbeHandler};
use crate::tasks::Task;

impl Engine {
    /// The pod CIDRs of a simulated node: `10.244.<n>.0/24` and `fd00:10:244:<n>::/64`.
    pub fn pod_cidrs(&self, node: &str) -> Option<(String, String)> {
        let n = self.nodes.get(node)?;
        Some((
            format!("10.244.{}.0/24", n.index),
            format!("fd00:10:244:{:x}::/64", n.index),
        ))
    }

    fn allocate_ips(&mut self, node: &str) -> Vec<IpAddr> {
        let dual = self.config.dual_stack;
        let Some(n) = self.nodes.get_mut(node) else {
            return Vec::new();
        };
        let mut host = n.next_host;
        for _ in 0..253 {
            if host > 254 {
                host = 2;
            }
            if !n.used.contains(host) {
                break;
            }
            host += 1;
        }
        n.used.insert(host);
        n.next_host = host + 1;
        // One /24 per node counted up from 10.244.0.0 (node 256 gets 10.245.0.0/24, …); past
        // 10.255.255.0 (node 3,072 on) the count continues at 10.0.0.0/24 — still unique per
        // node for up to 65,536 nodes, with no arithmetic overflow.
        let idx = n.index;
        let slot = ((244u32 << 8) + idx) & 0xffff;
        let v4 = Ipv4Addr::new(10, (slot >> 8) as u8, (slot & 0xff) as u8, host as u8);
        let mut ips = vec![IpAddr::V4(v4)];
        if dual {
            ips.push(IpAddr::V6(Ipv6Addr::new(
                0xfd00,
                0x10,
                0x244,
                idx as u16,
                0,
                0,
                0,
                host as u16,
            )));
        }
        ips
    }

    /// The container of pod `key` exited and the kubelet started it again at once (as after
    /// a crash under `restartPolicy: Always`): its `restartCount` goes up by one; the
    /// simulated process keeps serving. `false` when there is no such running pod.
    pub fn restart_container(&mut self, key: &ObjectKey) -> bool {
        let Some((pod, _)) = self.stored_pod(key) else {
            return false;
        };
        if pod.pod.phase != PodPhase::Running {
            return false;
        }
        let mut pod = pod.clone();
        pod.restart_count += 1;
        self.update(Object::Pod(pod), None).is_ok()
    }

    pub(crate) fn container_started(&mut self, key: &ObjectKey, uid: &str) {
        let Some((pod, _)) = self.stored_pod(key) else {
            return;
        };
        if pod.pod.meta.uid != uid || !self.kubelet_running(&pod.pod.spec.node_name) {
            // A stopped kubelet starts nothing; it resyncs the pod when it is back.
            return;
        }
        if self.pods.get(key).is_some_and(|rt| rt.uid == uid && rt.started) {
            return;
        }
        if pod.pod.meta.deletion_timestamp.is_some() {
            self.schedule(self.now, Task::RemovePod(key.clone(), uid.to_string()));
            return;
        }
        let mut pod = pod.clone();
        let node = pod.pod.spec.node_name.clone();
        let ips = if pod.pod.spec.host_network {
            self.store
                .get(&ObjectKey::new(crate::objects::Kind::Node, "", &node))
                .and_then(|s| s.object.as_node())
                .map(|n| n.internal_ips.clone())
                .unwrap_or_default()
        } else {
            self.allocate_ips(&node)
        };
        if !pod.pod.spec.host_network {
            for ip in &ips {
                self.pod_by_ip.insert(*ip, key.clone());
            }
        }
        self.serving_changed(&ips);
        let ready = pod.behaviour.readiness.is_none();
        let first_probe = pod
            .behaviour
            .readiness
            .as_ref()
            .map(|probe| self.now + probe.initial_delay_seconds * 1000);
        if let Some(rt) = self.pods.get_mut(key) {
            rt.started = true;
            rt.started_at = self.now;
            rt.running = true;
            rt.ips = ips.clone();
            rt.ready = ready;
            rt.probe_due = first_probe;
        }
        pod.pod.phase = PodPhase::Running;
        pod.pod.pod_ips = ips;
        pod.pod.ready = ready;
        if let Some(at) = first_probe {
            self.schedule(at, Task::Probe(key.clone(), uid.to_string()));
        }
        let _ = self.update(Object::Pod(pod), None);
    }

    pub(crate) fn probe(&mut self, key: &ObjectKey, uid: &str) {
        // The stored object is shared (`Arc`): read it in place, copy it only to write a
        // change (most probes change nothing).
        let Some((_, stored)) = self.stored_pod(key) else {
            return;
        };
        let Some(pod) = stored.as_pod() else { return };
        if pod.pod.meta.uid != uid {
            return;
        }
        let Some(probe) = &pod.behaviour.readiness else {
            return;
        };
        let Some(rt) = self.pods.get(key) else {
            return;
        };
        // A probe of an older chain (the kubelet restarted), or one due while the kubelet is
        // stopped: the restarted kubelet probes anew.
        if !rt.running || rt.probe_due != Some(self.now) || !self.kubelet_running(&rt.node) {
            return;
        }
        // The process answers on the TCP ports it declares (as connections do, `traffic.rs`).
        let listens_on = |port: u16| {
            pod.behaviour.listens
                && pod
                    .pod
                    .spec
                    .ports
                    .iter()
                    .any(|p| p.container_port == port && p.protocol == Protocol::TCP)
        };
        let up = self.now >= rt.started_at + pod.behaviour.ready_after_ms;
        let success = up
            && match &probe.handler {
                ProbeHandler::TcpSocket { port } => listens_on(*port),
                ProbeHandler::HttpGet { port, .. } => {
                    listens_on(*port) && !(probe.fails_on_sigterm() && rt.sigterm.is_some())
                }
                ProbeHandler::Exec => true,
            };
        let failures = if success { 0 } else { rt.probe_failures + 1 };
        let at = self.now + probe.period_seconds.max(1) * 1000;
        // The prober reports a result change (upstream `prober/worker.go`: the results manager
        // only signals changes), judged against the kubelet's own readiness, not the store's.
        let change = if success && !rt.ready {
            Some(true)
        } else if !success && rt.ready && failures >= probe.failure_threshold.max(1) {
            Some(false)
        } else {
            None
        };
        if let Some(r) = self.pods.get_mut(key) {
            r.probe_failures = failures;
            r.probe_due = Some(at);
            if let Some(ready) = change {
                r.ready = ready;
            }
        }
        if let Some(ready) = change {
            let mut pod = pod.clone();
            pod.pod.ready = ready;
            let _ = self.update(Object::Pod(pod), None);
        }
        self.schedule(at, Task::Probe(key.clone(), uid.to_string()));
    }

    pub(crate) fn process_exit(&mut self, key: &ObjectKey, uid: &str) {
        let Some((pod, _)) = self.stored_pod(key) else {
            return;
        };
        if pod.pod.meta.uid != uid {
            return;
        }
        // Already exited (a shortened grace period schedules a second, earlier exit).
        if self
            .pods
            .get(key)
            .is_some_and(|rt| rt.uid == uid && rt.started && !rt.running)
        {
            return;
        }
        let mut pod = pod.clone();
        let mut exited = Vec::new();
        if let Some(rt) = self.pods.get_mut(key) {
            rt.running = false;
            rt.ready = false;
            exited = rt.ips.clone();
        }
        self.serving_changed(&exited);
        // The process exits on its own; a stopped kubelet neither reports it nor finishes the
        // deletion (it does both when it is back).
        if !self.kubelet_running(&pod.pod.spec.node_name) {
            return;
        }
        pod.pod.ready = false;
        let _ = self.update(Object::Pod(pod), None);
        let at = self.now + self.config.kubelet_cleanup_delay_ms;
        self.schedule(at, Task::RemovePod(key.clone(), uid.to_string()));
    }

    /// The grace period a delete request gave a terminating pod
    /// (`metadata.deletionGracePeriodSeconds`), if one was given and the kubelet runs it.
    pub fn deletion_grace_period_seconds(&self, key: &ObjectKey) -> Option<u64> {
        self.pods.get(key).and_then(|rt| rt.deletion_grace)
    }

    /// A delete request with a grace period of `grace` s (k8s.io/kubernetes
    /// `pkg/kubelet/kuberuntime/kuberuntime_container.go` `killContainer`): the kubelet sends
    /// SIGTERM now if it has not yet, and the process exits after its shutdown delay but at
    /// most `grace` s from now. A pod whose container has not started is left to the kubelet's
    /// sync, which removes it.
    pub(crate) fn terminate_within(&mut self, key: &ObjectKey, grace: u64) {
        let Some((pod, _)) = self.stored_pod(key) else {
            return;
        };
        let uid = pod.pod.meta.uid.clone();
        let delay = pod.behaviour.shutdown_delay_seconds;
        let now = self.now;
        let Some(rt) = self.pods.get_mut(key).filter(|rt| rt.uid == uid) else {
            return;
        };
        let grace = rt.deletion_grace.map_or(grace, |g| g.min(grace));
        rt.deletion_grace = Some(grace);
        if !(rt.started && rt.running) {
            return;
        }
        let node = rt.node.clone();
        if !self.kubelet_running(&node) {
            return;
        }
        let Some(rt) = self.pods.get_mut(key) else { return };
        let exit_after = if rt.sigterm.is_none() {
            rt.sigterm = Some(now);
            delay.min(grace)
        } else {
            grace
        };
        self.schedule(now + exit_after * 1000, Task::ProcessExit(key.clone(), uid));
    }

    pub(crate) fn remove_pod(&mut self, key: &ObjectKey, uid: &str) {
        // A stopped kubelet removes nothing (a bound pod waits for it or for the pod GC).
        let matches = self.stored_pod(key).is_some_and(|(p, _)| {
            p.pod.meta.uid == uid
                && (p.pod.spec.node_name.is_empty() || self.kubelet_running(&p.pod.spec.node_name))
        });
        if matches {
            let _ = self.store.remove(key, self.now);
            self.forget_pod(key);
        }
    }

    /// Drops the kubelet's runtime state of a removed pod and frees its IPs.
    pub(crate) fn forget_pod(&mut self, key: &ObjectKey) {
        if self.store.get(key).is_some() {
            return;
        }
        if let Some(rt) = self.pods.remove(key) {
            self.serving_changed(&rt.ips);
            for ip in &rt.ips {
                if self.pod_by_ip.get(ip) != Some(key) {
                    continue; // a hostNetwork pod's node address
                }
                self.pod_by_ip.remove(ip);
                self.retired_ips.insert(*ip);
                if let (IpAddr::V4(v4), Some(n)) = (ip, self.nodes.get_mut(rt.node.as_str())) {
                    n.used.remove(u32::from(v4.octets()[3]));
                }
            }
        }
    }
}

impl Engine {
    /// Kubelet reaction to a pod change on its node (admission, SIGTERM, cleanup).
    pub(crate) fn kubelet_sync(&mut self, key: &ObjectKey) {
        let Some((pod, _)) = self.stored_pod(key) else {
            self.forget_pod(key);
            return;
        };
        let uid = pod.pod.meta.uid.clone();
        let node = pod.pod.spec.node_name.clone();
        let deleting = pod.pod.meta.deletion_timestamp.is_some();
        let start_delay_ms = pod.behaviour.start_delay_ms;
        let exit_after_s = pod
            .behaviour
            .shutdown_delay_seconds
            .min(pod.behaviour.termination_grace_period_seconds);
        if node.is_empty() {
            // An unscheduled pod is deleted at once (upstream `CheckGracefulDelete`).
            if deleting {
                self.schedule(self.now, Task::RemovePod(key.clone(), uid));
            }
            return;
        }
        if !self.kubelet_running(&node) {
            // A stopped kubelet acts on nothing until it is back (it then resyncs its pods);
            // the pods of a deleted node are left to the simulated pod GC.
            return;
        }
        // What the kubelet knows of this pod: whether its container started, and whether it
        // sent SIGTERM.
        let known = self
            .pods
            .get(key)
            .filter(|r| r.uid == uid)
            .map(|r| (r.started, r.sigterm.is_some()));
        match known {
            None if !deleting => {
                let replaced = self.pods.insert(
                    key.clone(),
                    crate::engine::PodRuntime {
                        uid: uid.clone(),
                        node,
                        ..Default::default()
                    },
                );
                self.serving_changed(&replaced.map(|rt| rt.ips).unwrap_or_default());
                let jitter = self.rng.below(self.config.start_jitter_ms + 1);
                let at = self.now + start_delay_ms + jitter;
                self.schedule(at, Task::ContainerStarted(key.clone(), uid));
            }
            None => self.schedule(self.now, Task::RemovePod(key.clone(), uid)),
            Some((started, false)) if deleting => {
                if !started {
                    self.schedule(self.now, Task::RemovePod(key.clone(), uid));
                    return;
                }
                if let Some(r) = self.pods.get_mut(key) {
                    r.sigterm = Some(self.now);
                }
                self.schedule(
                    self.now + exit_after_s * 1000,
                    Task::ProcessExit(key.clone(), uid),
                );
            }
            Some(_) => {}
        }
    }
}
