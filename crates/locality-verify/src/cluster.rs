//! The Kubernetes API calls a run makes, through kube-rs: create, get, delete by path, and
//! the `pods/proxy` GET the probes use. Nothing here is specific to the simulated cluster.

use std::time::Duration;

use http::{Method, Request};
use kube::client::Body;
use serde_json::Value;

use crate::run::VerifyError;

/// A client of one API server.
#[derive(Clone)]
pub struct Cluster {
    client: kube::Client,
    /// The server's URL (for messages).
    pub server: String,
}

/// An API answer that was not a success.
#[derive(Debug, Clone)]
pub struct ApiFailure {
    /// HTTP status.
    pub code: u16,
    /// `Status.message`, or the body.
    pub message: String,
}

impl Cluster {
    /// A cluster reached through `client`.
    pub fn new(client: kube::Client, server: String) -> Self {
        Cluster { client, server }
    }

    /// One request: the status code and body, or a transport error.
    pub async fn call(
        &self,
        method: Method,
        path: &str,
        body: Option<&Value>,
    ) -> Result<(u16, Vec<u8>), VerifyError> {
        let mut req = Request::builder()
            .method(method.clone())
            .uri(path)
            .header(http::header::ACCEPT, "application/json");
        let body = match body {
            Some(v) => {
                req = req.header(http::header::CONTENT_TYPE, "application/json");
                Body::from(serde_json::to_vec(v).unwrap_or_default())
            }
            None => Body::empty(),
        };
        let req = req.body(body).map_err(|e| VerifyError::Api {
            what: format!("{method} {path}"),
            message: e.to_string(),
        })?;
        let resp = self.client.send(req).await.map_err(|e| VerifyError::Api {
            what: format!("{method} {}{path}", self.server),
            message: e.to_string(),
        })?;
        let code = resp.status().as_u16();
        let bytes = resp
            .into_body()
            .collect_bytes()
            .await
            .map_err(|e| VerifyError::Api {
                what: format!("{method} {}{path}", self.server),
                message: e.to_string(),
            })?;
        Ok((code, bytes.to_vec()))
    }

    /// Like [`call`](Self::call), with a non-2xx answer as an [`ApiFailure`].
    pub async fn json(
        &self,
        method: Method,
        path: &str,
        body: Option<&Value>,
    ) -> Result<Result<Value, ApiFailure>, VerifyError> {
        let (code, bytes) = self.call(method, path, body).await?;
        if (200..300).contains(&code) {
            return Ok(Ok(serde_json::from_slice(&bytes).unwrap_or(Value::Null)));
        }
        let message = serde_json::from_slice::<Value>(&bytes)
            .ok()
            .and_then(|v| v["message"].as_str().map(str::to_string))
            .unwrap_or_else(|| String::from_utf8_lossy(&bytes).into_owned());
        Ok(Err(ApiFailure { code, message }))
    }

    /// Creates an object at its collection `path`.
    pub async fn create(&self, path: &str, object: &Value) -> Result<Value, VerifyError> {
        self.json(Method::POST, path, Some(object))
            .await?
            .map_err(|f| VerifyError::Api {
                what: format!(
                    "create {} {}",
                    object["kind"].as_str().unwrap_or("object"),
                    object["metadata"]["name"].as_str().unwrap_or("")
                ),
                message: format!("{} {}", f.code, f.message),
            })
    }

    /// GETs an object; `None` when it does not exist.
    pub async fn get(&self, path: &str) -> Result<Option<Value>, VerifyError> {
        match self.json(Method::GET, path, None).await? {
            Ok(v) => Ok(Some(v)),
            Err(f) if f.code == 404 => Ok(None),
            Err(f) => Err(VerifyError::Api {
                what: format!("get {path}"),
                message: format!("{} {}", f.code, f.message),
            }),
        }
    }

    /// Deletes an object (absent is fine).
    pub async fn delete(&self, path: &str) -> Result<(), VerifyError> {
        match self.json(Method::DELETE, path, None).await? {
            Ok(_) => Ok(()),
            Err(f) if f.code == 404 => Ok(()),
            Err(f) => Err(VerifyError::Api {
                what: format!("delete {path}"),
                message: format!("{} {}", f.code, f.message),
            }),
        }
    }

    /// Polls `check` every `every` until it returns `Some`, for at most `timeout`.
    pub async fn wait_for<T, F, Fut>(
        &self,
        timeout: Duration,
        every: Duration,
        mut check: F,
    ) -> Result<Option<T>, VerifyError>
    where
        F: FnMut() -> Fut,
        Fut: std::future::Future<Output = Result<Option<T>, VerifyError>>,
    {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            if let Some(v) = check().await? {
                return Ok(Some(v));
            }
            if tokio::time::Instant::now() >= deadline {
                return Ok(None);
            }
            tokio::time::sleep(every).await;
        }
    }
}
