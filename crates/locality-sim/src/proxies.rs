//! The simulated kube-proxies as the engine runs them: one per node, fed by one shared,
//! versioned informer (`crate::informer`), each syncing its rules one lag after the events it
//! watches but at most once per minimum sync period, restarted (empty, then a full replay)
//! when its profile or version changes.

use locality_model::version::KubeVersion;

use crate::engine::{Engine, NodeRuntime, PRUNE_EVERY};
use crate::kubeproxy::{DataPlaneProfile, SimKubeProxy};
use crate::objects::Kind;
use crate::store::WatchEvent;
use crate::tasks::Task;
use crate::time::Millis;
use compact_str::CompactString;

impl Engine {
    /// Sets the data-plane profile of a node's simulated kube-proxy (before or after the node
    /// exists; an existing kube-proxy restarts with an empty table and resyncs).
    pub fn set_profile(&mut self, node: &str, profile: DataPlaneProfile) {
        self.profiles.insert(node.to_string(), profile);
        if self.nodes.contains_key(node) {
            self.restart_proxy(node);
        }
    }

    /// Sets the version of a node's simulated kube-proxy (restarts it).
    pub fn set_proxy_version(&mut self, node: &str, version: KubeVersion) {
        self.proxy_versions.insert(node.to_string(), version);
        if self.nodes.contains_key(node) {
            self.restart_proxy(node);
        }
    }

    /// A node's simulated kube-proxy.
    pub fn kube_proxy(&self, node: &str) -> Option<&SimKubeProxy> {
        self.nodes.get(node).map(|n| &n.proxy)
    }

    /// The EndpointSlice changes a node's simulated kube-proxy has received but not yet
    /// programmed: `kubeproxy_sync_proxy_rules_endpoint_changes_pending`. Its informer holds
    /// every event up to now; its rules hold those up to the position its last sync applied
    /// (the sync delay, plus the `stale-rules` lag, behind). Before its first sync after a
    /// start, the slices its initial list delivered. `None` for an unknown node.
    pub fn endpoint_changes_pending(&self, node: &str) -> Option<usize> {
        let proxy = &self.nodes.get(node)?.proxy;
        let received = self.informer.len();
        Some(match proxy.applied_position() {
            Some(applied) => self.informer.slice_changes(applied, received),
            None => self.informer.slices_at(received),
        })
    }

    /// Feeds the kube-proxies' shared informer the store's events up to `rv` and wakes the
    /// idle kube-proxies that watch them.
    pub(crate) fn feed_proxies(&mut self, rv: u64) {
        let new: Vec<WatchEvent> = self
            .store
            .events_since(self.proxy_cursor)
            .map(|e| e.to_vec())
            .unwrap_or_default();
        self.proxy_cursor = rv;
        for ev in new {
            if !self.informer.push(&ev) {
                continue;
            }
            // Every kube-proxy watches Services and EndpointSlices; only its own Node.
            let woken: Vec<String> = if ev.key.kind == Kind::Node {
                let own = self
                    .nodes
                    .get(ev.key.name.as_str())
                    .is_some_and(|n| n.proxy.identity == ev.key.name);
                own.then(|| self.idle_proxies.take(ev.key.name.as_str()))
                    .flatten()
                    .into_iter()
                    .collect()
            } else {
                std::mem::take(&mut self.idle_proxies).into_iter().collect()
            };
            for name in woken {
                self.wake_proxy(&name, ev.time);
            }
        }
        self.compact_events();
        if self.informer.len() / PRUNE_EVERY > self.pruned / PRUNE_EVERY {
            self.pruned = self.informer.len();
            let floor = self
                .nodes
                .values()
                .map(|n| n.proxy.floor)
                .min()
                .unwrap_or(self.pruned);
            self.informer.prune(floor);
        }
    }

    /// Schedules the sync of an idle kube-proxy for an event at `time`: one lag later, but not
    /// before its minimum sync period has passed.
    pub(crate) fn wake_proxy(&mut self, name: &str, time: Millis) {
        let min_sync = self.config.proxy_min_sync_period_ms;
        let Some(n) = self.nodes.get_mut(name) else { return };
        let proxy = &mut n.proxy;
        if proxy.next_sync.is_some() {
            return;
        }
        let earliest = proxy.last_sync().map_or(0, |t| t + min_sync);
        let at = (time + proxy.lag_ms).max(earliest).max(self.now);
        proxy.next_sync = Some(at);
        self.schedule(at, Task::ProxySync(name.to_string()));
    }

    pub(crate) fn proxy_sync(&mut self, node: &str) {
        let now = self.now;
        let Some(n) = self.nodes.get_mut(node) else { return };
        n.proxy.next_sync = None;
        let position = self.informer.position_at(now.saturating_sub(n.proxy.lag_ms));
        n.proxy
            .sync(now, position, &self.informer, &mut self.endpoint_cache);
        // Events not yet due: sync again when the first one it watches is.
        match self.informer.next_relevant(position, &n.proxy.identity) {
            Some(i) => {
                let due = self.informer.time_of(i).unwrap_or(now);
                let at = (due + n.proxy.lag_ms).max(now + self.config.proxy_min_sync_period_ms);
                n.proxy.next_sync = Some(at);
                self.schedule(at, Task::ProxySync(node.to_string()));
            }
            None => {
                self.idle_proxies.insert(node.to_string());
            }
        }
    }

    pub(crate) fn add_node_runtime(&mut self, name: &str) {
        if self.nodes.contains_key(name) {
            return;
        }
        self.node_count += 1;
        let proxy = self.new_proxy(name);
        self.nodes.insert(
            CompactString::new(name),
            NodeRuntime {
                index: self.node_count,
                next_host: 2,
                used: Default::default(),
                proxy,
            },
        );
        // Its kube-proxy starts by listing everything it watches.
        self.schedule_proxy_replay(name);
    }

    pub(crate) fn new_proxy(&self, name: &str) -> SimKubeProxy {
        SimKubeProxy::new(
            name,
            self.profiles.get(name).cloned().unwrap_or_default(),
            self.proxy_versions
                .get(name)
                .copied()
                .unwrap_or(self.config.kube_proxy_version),
            &self.config.feature_gates,
            self.config.proxy_sync_delay_ms,
        )
    }

    pub(crate) fn restart_proxy(&mut self, name: &str) {
        let proxy = self.new_proxy(name);
        if let Some(n) = self.nodes.get_mut(name) {
            n.proxy = proxy;
        }
        self.schedule_proxy_replay(name);
    }

    pub(crate) fn schedule_proxy_replay(&mut self, name: &str) {
        // The feed holds every relevant event since the start, so a fresh kube-proxy replays it
        // (a list then watch) and programs its table one sync delay from now.
        let at = self.now + self.config.proxy_sync_delay_ms;
        self.idle_proxies.remove(name);
        if !self.config.kube_proxies {
            return;
        }
        if let Some(n) = self.nodes.get_mut(name) {
            n.proxy.applied = None;
            n.proxy.floor = self.informer.position_at(at.saturating_sub(n.proxy.lag_ms));
            n.proxy.next_sync = Some(at);
        }
        self.schedule(at, Task::ProxySync(name.to_string()));
    }
}
