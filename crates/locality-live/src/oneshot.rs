//! One-shot reads ([`crate::snapshot`], [`crate::get_blocking`]): their client, with the
//! credential plugin run within bounds (`crate::exec`) and the credentials it sends kept for
//! masking, and the deadline of the whole read (`LiveOptions::deadline`).

use crate::{CREDENTIAL_TIMEOUT, LiveError, LiveOptions, Target};

/// The client of a one-shot read and the credentials it sends (masked wherever a
/// server's text is quoted): as [`client`], except that a credential plugin is run by
/// `exec` (output capped, killed after its timeout) and its credential used as is.
pub(crate) async fn one_shot_client(
    opts: &LiveOptions,
) -> Result<(kube::Client, Target, Vec<String>), LiveError> {
    use secrecy::ExposeSecret as _;
    let mut resolved = crate::config::resolve(opts).await?;
    let target = resolved.target;
    let credential_timeout = opts
        .request_timeout
        .map_or(CREDENTIAL_TIMEOUT, |t| t.min(CREDENTIAL_TIMEOUT));
    let auth = &mut resolved.config.auth_info;
    let mut secrets: Vec<String> = Vec::new();
    secrets.extend(auth.token.as_ref().map(|t| t.expose_secret().to_owned()));
    secrets.extend(auth.password.as_ref().map(|p| p.expose_secret().to_owned()));
    if let Some(exec) = auth.exec.take() {
        let known: Vec<String> = secrets.clone();
        let run = tokio::task::spawn_blocking(move || {
            let known: Vec<&str> = known.iter().map(String::as_str).collect();
            crate::exec::run(&exec, credential_timeout, &known)
        });
        let credential = run
            .await
            .map_err(|e| format!("the credential plugin could not be run: {e}"))
            .and_then(|r| r)
            .map_err(|message| LiveError::Kubeconfig {
                source_name: target.kubeconfig.clone(),
                message,
            })?;
        if let Some(token) = credential.token {
            secrets.push(token.clone());
            auth.token = Some(token.into());
        }
        if let (Some(cert), Some(key)) = (credential.client_certificate_data, credential.client_key_data) {
            auth.client_certificate_data = Some(cert);
            auth.client_key_data = Some(key.into());
        }
    }
    let client = crate::build_client(resolved.config, credential_timeout)
        .await
        .map_err(|message| LiveError::Kubeconfig {
            source_name: target.kubeconfig.clone(),
            message,
        })?;
    Ok((client, target, secrets))
}

/// Runs `work` within `opts`' [deadline](LiveOptions::deadline).
pub(crate) async fn within_deadline<T>(
    opts: &LiveOptions,
    work: impl std::future::Future<Output = Result<T, LiveError>>,
) -> Result<T, LiveError> {
    let Some(limit) = opts.deadline else {
        return work.await;
    };
    tokio::time::timeout(limit, work)
        .await
        .unwrap_or(Err(LiveError::Deadline { limit }))
}

#[cfg(test)]
mod tests {
    /// A one-shot read nobody gave a timeout still ends (`--live-timeout`'s default); `0`
    /// (`None`) is the only way to turn it off.
    #[test]
    fn one_shot_reads_have_a_default_deadline() {
        assert_eq!(
            crate::LiveOptions::default().deadline,
            Some(crate::DEFAULT_DEADLINE)
        );
        assert!(crate::DEFAULT_DEADLINE <= std::time::Duration::from_secs(600));
    }
}
