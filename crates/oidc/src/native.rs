//! Signing in as a native app (RFC 8252): MGDS Desktop and the command line open the system
//! browser at the provider, and the provider sends it back to a listener of their own on
//! loopback (`http://127.0.0.1:PORT/callback`, a port chosen by the system), which takes the code
//! once and tells the person they may close the tab. The code is exchanged with PKCE as a
//! public client (no secret: an app's secret would not stay one).
//!
//! The listener reads only what it needs: the request line of at most [`MAX_HEAD_BYTES`], from
//! loopback, [`READ_TIMEOUT`] per connection; other paths get 404, a `state` that is not this
//! sign-in's gets a page saying so (an old tab), and the wait ends after the caller's limit.

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use crate::{AuthorizationRequest, Claims, ClientAuth, Error, Pkce, Provider, Result, Tokens, random_token};

/// The longest request head the listener reads.
pub const MAX_HEAD_BYTES: usize = 8 * 1024;

/// The longest wait for one connection's request.
pub const READ_TIMEOUT: Duration = Duration::from_secs(10);

/// A sign-in begun: its address to open in the browser, and the listener that waits for the
/// browser to come back.
pub struct LoopbackSignIn {
    listener: TcpListener,
    /// The loopback address the provider sends the browser back to.
    pub redirect_uri: String,
    /// The address to open in the browser.
    pub url: String,
    client_id: String,
    issuer: String,
    state: String,
    nonce: String,
    pkce: Pkce,
}

/// What a finished sign-in gives.
#[derive(Debug)]
pub struct SignedIn {
    /// The provider's tokens (a refresh token among them, when it gives one).
    pub tokens: Tokens,
    /// The ID token's claims, checked.
    pub claims: Claims,
}

impl LoopbackSignIn {
    /// Listens on a free loopback port and makes the address of a sign-in as `client_id`.
    pub async fn begin(provider: &Provider, client_id: &str, scopes: &str) -> Result<LoopbackSignIn> {
        let listener = TcpListener::bind(("127.0.0.1", 0)).await.map_err(|e| Error::Provider {
            url: "http://127.0.0.1".into(),
            reason: format!("cannot listen on loopback for the provider's answer: {e}"),
        })?;
        let port = listener.local_addr().map(|a| a.port()).unwrap_or_default();
        let redirect_uri = format!("http://127.0.0.1:{port}/callback");
        let (state, nonce, pkce) = (random_token(), random_token(), Pkce::new());
        let url = provider.authorization_url(&AuthorizationRequest {
            client_id,
            redirect_uri: &redirect_uri,
            scopes,
            state: &state,
            nonce: &nonce,
            code_challenge: &pkce.challenge,
            // Asked so that providers that give refresh tokens only with consent (offline
            // access) give one.
            prompt: Some("consent"),
        });
        Ok(LoopbackSignIn {
            listener,
            redirect_uri,
            url,
            client_id: client_id.to_string(),
            issuer: provider.issuer().to_string(),
            state,
            nonce,
            pkce,
        })
    }

    /// Waits (at most `within`) for the browser to come back, exchanges the code and checks the
    /// ID token.
    pub async fn finish(self, provider: &Provider, within: Duration) -> Result<SignedIn> {
        let code = tokio::time::timeout(within, self.wait_for_code()).await.map_err(|_| Error::Refused {
            error: "timeout".into(),
            description: Some(format!(
                "the browser did not come back within {} minutes; sign in again",
                within.as_secs().div_ceil(60)
            )),
        })??;
        let client = ClientAuth { client_id: self.client_id.clone(), secret: None };
        let tokens = provider.exchange_code(&client, &code, &self.redirect_uri, &self.pkce.verifier).await?;
        let id_token =
            tokens.id_token.as_deref().ok_or_else(|| Error::Token("the provider sent no ID token".into()))?;
        let claims = provider.verify_id_token(id_token, &self.client_id, &self.nonce).await?;
        Ok(SignedIn { tokens, claims })
    }

    async fn wait_for_code(&self) -> Result<String> {
        loop {
            let Ok((stream, peer)) = self.listener.accept().await else { continue };
            if !peer.ip().is_loopback() {
                continue;
            }
            match tokio::time::timeout(READ_TIMEOUT, self.answer(stream)).await {
                Ok(Some(outcome)) => return outcome,
                _ => continue,
            }
        }
    }

    /// Answers one connection; `Some` when it brought this sign-in's answer.
    async fn answer(&self, mut stream: TcpStream) -> Option<Result<String>> {
        let target = read_target(&mut stream).await?;
        let (path, query) = target.split_once('?').unwrap_or((&target, ""));
        if path != "/callback" {
            let _ = respond(&mut stream, "404 Not Found", "Not found", "This address is not MGDS's sign-in.").await;
            return None;
        }
        let pairs: Vec<(String, String)> =
            url::form_urlencoded::parse(query.as_bytes()).into_owned().take(32).collect();
        let get = |k: &str| pairs.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
        if get("state") != Some(self.state.as_str()) {
            let _ = respond(
                &mut stream,
                "400 Bad Request",
                "Not this sign-in",
                "This page belongs to an earlier sign-in. Go back to MGDS and sign in again.",
            )
            .await;
            return None;
        }
        if let Some(error) = get("error") {
            let said = get("error_description").unwrap_or(error).chars().take(300).collect::<String>();
            let _ =
                respond(&mut stream, "200 OK", "Not signed in", &format!("The provider did not sign you in: {said}"))
                    .await;
            return Some(Err(Error::Refused {
                error: error.to_string(),
                description: get("error_description").map(str::to_string),
            }));
        }
        // RFC 9207: where the provider names itself, it must be the one asked.
        if get("iss").is_some_and(|iss| iss != self.issuer) {
            let _ = respond(&mut stream, "400 Bad Request", "Not signed in", "The answer came from another provider.")
                .await;
            return Some(Err(Error::Token("the answer came from another provider than the one asked".into())));
        }
        let code = get("code")?.to_string();
        let _ = respond(
            &mut stream,
            "200 OK",
            "Signed in to MGDS",
            "You are signed in. You can close this tab and go back to MGDS.",
        )
        .await;
        Some(Ok(code))
    }
}

/// The request target of a request's first line (`GET /callback?... HTTP/1.1`), reading at most
/// [`MAX_HEAD_BYTES`].
async fn read_target(stream: &mut TcpStream) -> Option<String> {
    let mut head = Vec::with_capacity(1024);
    let mut buf = [0u8; 1024];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = stream.read(&mut buf).await.ok()?;
        if n == 0 || head.len() + n > MAX_HEAD_BYTES {
            return None;
        }
        head.extend_from_slice(&buf[..n]);
    }
    let line = head.split(|b| *b == b'\n').next()?;
    let line = std::str::from_utf8(line).ok()?.trim_end();
    let mut parts = line.split(' ');
    let (method, target) = (parts.next()?, parts.next()?);
    (method == "GET").then(|| target.to_string())
}

async fn respond(stream: &mut TcpStream, status: &str, title: &str, text: &str) -> std::io::Result<()> {
    let body = format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{t}</title></head>\
         <body style=\"font-family:sans-serif;max-width:32em;margin:4em auto\"><h1>{t}</h1><p>{x}</p></body></html>",
        t = escape(title),
        x = escape(text)
    );
    let head = format!(
        "HTTP/1.1 {status}\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\n\
         Cache-Control: no-store\r\nContent-Security-Policy: default-src 'none'; style-src 'unsafe-inline'\r\n\
         Connection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).await?;
    stream.write_all(body.as_bytes()).await?;
    stream.shutdown().await
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}
