//! The caller of a request, as the handlers receive it: the user whose API key the request
//! presents (see [`crate::auth`]), or nobody; an unknown key counts against its address.

use std::net::SocketAddr;

use axum::extract::{ConnectInfo, FromRequestParts};
use axum::http::request::Parts;

use crate::auth::{Caller, presented_key, user_for_key};
use crate::error::ApiError;
use crate::state::AppState;

impl FromRequestParts<AppState> for Caller {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        // Cached so a handler and a middleware can both ask.
        if let Some(c) = parts.extensions.get::<Caller>() {
            return Ok(c.clone());
        }
        let peer = parts.extensions.get::<ConnectInfo<SocketAddr>>().map(|ConnectInfo(a)| a.ip());
        let ip = peer.map(|p| state.limiter.client_address(p, &parts.headers));
        let key = match presented_key(&parts.headers) {
            Ok(Some(key)) => key,
            Ok(None) => {
                let caller = Caller(None);
                parts.extensions.insert(caller.clone());
                return Ok(caller);
            }
            Err(e) => return Err(state.limiter.failed(ip, None).unwrap_or(e)),
        };
        // A valid key is never refused, whatever failed before from its address: the key is
        // looked up first, and only an unknown key counts (and may be answered 429).
        match user_for_key(&state.db, &key).await? {
            Some(user) => {
                let caller = Caller(Some(user));
                parts.extensions.insert(caller.clone());
                Ok(caller)
            }
            None => Err(state.limiter.failed(ip, Some(&key)).unwrap_or_else(|| {
                ApiError::Unauthorized(
                    "the API key is not valid (it may have been replaced by a newer one); \
                     ask your administrator for a new key"
                        .into(),
                )
            })),
        }
    }
}
